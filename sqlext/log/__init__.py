"""The Delta transaction log, free of Spark: actions, replay into snapshots, commits, stores."""

from sqlext.log import s3_store  # noqa: F401 - registers the store of s3:// and s3a:// tables
