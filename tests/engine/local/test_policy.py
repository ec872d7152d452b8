"""The driver-path settings (sqlext.engine.local.policy)."""

from __future__ import annotations

import pytest

from sqlext.engine.local import policy
from sqlext.errors import IllegalArgumentError
from tests.support.spark import spark_conf


def test_auto_takes_the_driver_path_up_to_the_size_limit(spark):
    with spark_conf(spark, {policy.MODE_CONF: "auto", policy.MAX_BYTES_CONF: "1mb"}):
        assert policy.use_driver(spark, 1024 * 1024)
        assert not policy.use_driver(spark, 1024 * 1024 + 1)


def test_default_limit_is_16_mb(spark):
    with spark_conf(spark, {policy.MODE_CONF: "auto"}):
        spark.conf.unset(policy.MAX_BYTES_CONF)
        assert policy.max_bytes(spark) == 16 * 1024 * 1024
        assert policy.use_driver(spark, 16 * 1024 * 1024)
        assert not policy.use_driver(spark, 16 * 1024 * 1024 + 1)


def test_a_query_s_reads_have_their_own_smaller_limit(spark):
    """A query only hands the rows to Spark, whose scan of more than a few hundred KB is cheaper
    than the driver path; a DML statement keeps ``localMaxBytes``."""
    with spark_conf(spark, {policy.MODE_CONF: "auto"}):
        spark.conf.unset(policy.MAX_BYTES_CONF)
        spark.conf.unset(policy.READ_MAX_BYTES_CONF)
        assert policy.use_driver(spark, 256 * 1024, query=True)
        assert not policy.use_driver(spark, 256 * 1024 + 1, query=True)
        assert policy.use_driver(spark, 256 * 1024 + 1)
    with spark_conf(spark, {policy.MODE_CONF: "auto", policy.READ_MAX_BYTES_CONF: "2mb"}):
        assert policy.use_driver(spark, 2 * 1024 * 1024, query=True)
        assert not policy.use_driver(spark, 2 * 1024 * 1024 + 1, query=True)
    with spark_conf(spark, {policy.MODE_CONF: "force", policy.READ_MAX_BYTES_CONF: "0"}):
        assert policy.use_driver(spark, 10 ** 9, query=True)


def test_force_and_off_ignore_the_size(spark):
    with spark_conf(spark, {policy.MODE_CONF: " FORCE ", policy.MAX_BYTES_CONF: "0"}):
        assert policy.use_driver(spark, 10 ** 12)
    with spark_conf(spark, {policy.MODE_CONF: "off"}):
        assert not policy.use_driver(spark, 0)


def test_a_bad_mode_names_the_setting_and_the_table(spark):
    with spark_conf(spark, {policy.MODE_CONF: "sometimes"}):
        with pytest.raises(IllegalArgumentError, match=r"table t, version 3: .*auto, force, off"):
            policy.use_driver(spark, 0, "table t, version 3")


def test_pyspark_lines_before_4_3_take_the_spark_path(spark, monkeypatch):
    assert policy._line("4.2.1") < policy.FIRST_LINE <= policy._line("4.3.0")
    assert policy._line("4.10.0.dev1") == (4, 10)
    with spark_conf(spark, {policy.MODE_CONF: "force"}):
        assert policy.use_driver(spark, 0) is policy.AVAILABLE
        monkeypatch.setattr(policy, "AVAILABLE", False)
        assert policy.mode(spark) == "off" and not policy.use_driver(spark, 0)
