"""``python -m sqlext.sql``: the ``sqlext-sql`` shell."""

import sys

from sqlext.sql.shell import main

sys.exit(main())
