"""An S3 endpoint on loopback for the S3 tests (moto, see :mod:`tests.support.s3_server`), and
the settings each client needs to reach a bucket on it: boto3 (sqlext's S3 log store), Spark's
s3a:// connector (data files), deltalake.

The s3a connector's jars are fetched by ``scripts/s3_jars.sh`` (run by ``test.sh``) and put on
the test session's classpath by :mod:`tests.support.spark`.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
JARS_FILE = REPO_ROOT / ".venv" / "s3a-jars.txt"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "sqlext-test", "AWS_SECRET_ACCESS_KEY": "sqlext-test",
               "AWS_REGION": "us-east-1"}


def s3a_jars() -> str | None:
    """The s3a connector's jars, comma-separated, when scripts/s3_jars.sh has fetched them."""
    return JARS_FILE.read_text().strip() if JARS_FILE.exists() else None


@dataclass
class S3Server:
    """A running moto server; :meth:`stop` ends it."""
    process: subprocess.Popen
    url: str

    @classmethod
    def start(cls, ignore_if_none_match: bool = False) -> "S3Server":
        args = [sys.executable, "-m", "tests.support.s3_server"]
        if ignore_if_none_match:
            args.append("--ignore-if-none-match")
        proc = subprocess.Popen(args, cwd=REPO_ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        line = proc.stdout.readline()
        if not line.startswith("port "):
            proc.kill()
            raise RuntimeError(f"moto server did not start: {line!r}")
        return cls(proc, f"http://127.0.0.1:{int(line.split()[1])}")

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)

    @property
    def env(self) -> dict[str, str]:
        """Environment for boto3 (and so sqlext's S3 log store) in another process."""
        return {**CREDENTIALS, "AWS_ENDPOINT_URL": self.url}

    def configure_store(self) -> None:
        """Point sqlext's S3 log store in this process at this server."""
        from sqlext.log import s3_store
        s3_store.configure(endpoint_url=self.url, aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                           aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                           region_name=CREDENTIALS["AWS_REGION"])

    def client(self):
        """A boto3 S3 client for this server."""
        import boto3
        from botocore.config import Config
        return boto3.client("s3", endpoint_url=self.url,
                            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                            region_name=CREDENTIALS["AWS_REGION"],
                            config=Config(s3={"addressing_style": "path"}))

    def new_bucket(self, prefix: str = "sqlext") -> str:
        """Create a bucket with a fresh name; returns the name."""
        name = f"{prefix}-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def configure_spark(self, spark, bucket: str) -> None:
        """Point the session's s3a connector at this server for ``bucket`` (per-bucket options,
        so buckets on different servers can be used side by side)."""
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        options = {
            "endpoint": self.url, "endpoint.region": CREDENTIALS["AWS_REGION"],
            "path.style.access": "true", "connection.ssl.enabled": "false",
            "access.key": CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "secret.key": CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            "aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        }
        for key, value in options.items():
            conf.set(f"fs.s3a.bucket.{bucket}.{key}", value)

    def deltalake_options(self) -> dict[str, str]:
        """``storage_options`` for deltalake (delta-rs) to read a table on this server."""
        return {**CREDENTIALS, "AWS_ENDPOINT_URL": self.url, "AWS_ALLOW_HTTP": "true",
                "AWS_S3_ALLOW_UNSAFE_RENAME": "true", "AWS_FORCE_PATH_STYLE": "true"}
