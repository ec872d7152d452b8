"""dbt's include package for the ``sqlext`` adapter: its ``dbt_project.yml`` and macros."""

import os

PACKAGE_PATH = os.path.dirname(__file__)
