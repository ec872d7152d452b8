"""What the wrapped pyspark objects record, and what every wrapper asks: is sqlext installed on
this session, is this name a sqlext table, which writer options does sqlext take."""

from __future__ import annotations

import functools

from pyspark.sql import SparkSession

from sqlext.errors import IllegalArgumentError

# attributes set on the SparkSession and on pyspark's reader/writer objects
INSTALLED = "_sqlext_installed"
FORMAT = "_sqlext_format"
OPTIONS = "_sqlext_options"
MODE = "_sqlext_mode"
PARTITIONS = "_sqlext_partition_by"

TRUE = ("true", "1", "yes")
# delta-spark's writer options -> (sqlext.write's argument, conversion)
WRITE_OPTIONS = {
    "replacewhere": ("replaceWhere", str),
    "mergeschema": ("mergeSchema", lambda v: str(v).lower() in TRUE),
    "overwriteschema": ("overwriteSchema", lambda v: str(v).lower() in TRUE),
    "partitionoverwritemode": ("partitionOverwriteMode", str),
    "usermetadata": ("userMetadata", str),
    "txnappid": ("txnAppId", str),
    "txnversion": ("txnVersion", int),
}


def installed(spark: SparkSession) -> bool:
    """Whether :func:`sqlext.install` ran on this session."""
    return bool(getattr(spark, INSTALLED, False))


def recorded(obj, name: str, default=None):
    """What a wrapper recorded on a pyspark object (``default`` when nothing)."""
    return obj.__dict__.get(name, default)


def option_key(key) -> str:
    """An option's key as recorded: lower-cased, as Spark compares them, except a ``delta.*``
    table property, which is stored in the table's configuration as written (delta-spark's
    ``delta.enableChangeDataFeed``, not ``delta.enablechangedatafeed``)."""
    key = str(key)
    return key if key.lower().startswith("delta.") else key.lower()


def merged_options(obj, options: dict) -> dict:
    """The options recorded on a pyspark reader/writer, overridden by ``options`` passed to the
    final call (``load``, ``save``, ...); keys as :func:`option_key` records them."""
    return {**recorded(obj, OPTIONS, {}), **{option_key(k): v for k, v in options.items()}}


def record_format(original, self, source):
    """Wrapper of ``format``/``using``: remember the format, then call pyspark's."""
    self.__dict__[FORMAT] = str(source).lower()
    return original(self, source)


def record_option(original, self, key, value):
    """Wrapper of ``option``: remember it (key as :func:`option_key` records it)."""
    self.__dict__.setdefault(OPTIONS, {})[option_key(key)] = value
    return original(self, key, value)


def record_options(original, self, **options):
    """Wrapper of ``options``."""
    self.__dict__.setdefault(OPTIONS, {}).update({option_key(k): v for k, v in options.items()})
    return original(self, **options)


def session_of(obj) -> SparkSession:
    """The session of a pyspark reader or writer (classic or Spark Connect)."""
    for attribute in ("_spark", "_session"):
        spark = obj.__dict__.get(attribute)
        if spark is not None:
            return spark
    return obj._client


def frame_of(writer):
    """The DataFrame a pyspark writer writes (a Spark Connect writer holds its plan)."""
    df = writer._df
    if hasattr(df, "sparkSession"):
        return df
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame
    return ConnectDataFrame(df, writer._spark)


def is_sqlext_table(spark: SparkSession, name: str) -> bool:
    """Whether ``name`` (not a path) names a table in sqlext's catalog."""
    from sqlext.catalog import Catalog
    from sqlext.catalog.registry import looks_like_path, split_name
    if looks_like_path(name):
        return False
    catalog = Catalog(spark)
    schema, table = split_name(name)
    return catalog.lookup(schema or catalog.current_schema(), table) is not None


def write_arguments(table: str, options: dict) -> dict:
    """:func:`sqlext.write`'s arguments for delta-spark writer options (``delta.*`` ones become
    ``configuration``); an option sqlext does not know raises before anything is written."""
    arguments, configuration = {}, {}
    for key, value in options.items():
        if key in WRITE_OPTIONS:
            name, convert = WRITE_OPTIONS[key]
            try:
                arguments[name] = convert(value)
            except (TypeError, ValueError):
                raise IllegalArgumentError(f"write to {table}: option {key!r} cannot be "
                                           f"{value!r}. Nothing was written.") from None
        elif key.lower().startswith("delta."):
            configuration[key] = str(value)
        else:
            known = ", ".join(sorted(n for n, _ in WRITE_OPTIONS.values()))
            raise IllegalArgumentError(
                f"write to {table}: sqlext does not know the Delta writer option {key!r}; it "
                f"takes {known} and delta.* table properties (see sqlext.write). Nothing was "
                "written.")
    if configuration:
        arguments["configuration"] = configuration
    return arguments


def wrap_methods(cls, wrappers: dict) -> None:
    """Replace each method ``name`` of ``cls`` by ``wrapper(original, self, ...)``, once."""
    for name, wrapper in wrappers.items():
        original = getattr(cls, name)
        if not getattr(original, "_sqlext_wrapped", False):
            setattr(cls, name, _wrapped(wrapper, original))


def _wrapped(wrapper, original):
    @functools.wraps(original)
    def method(self, *args, **kwargs):
        return wrapper(original, self, *args, **kwargs)
    method._sqlext_wrapped = True
    return method
