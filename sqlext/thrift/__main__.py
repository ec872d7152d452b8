"""``python -m sqlext.thrift``: the ``sqlext-thriftserver`` command."""

import sys

from sqlext.thrift.server import main

sys.exit(main())
