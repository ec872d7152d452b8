-- CREATE TABLE in all its forms, CREATE OR REPLACE keeping history, ALTER TABLE, DROP TABLE,
-- CREATE / DROP SCHEMA.

-- check: table t1
-- check: history t1 0 CREATE TABLE
-- duckdb: CREATE TABLE t1 (a INT, b STRING, c DATE)
CREATE TABLE t1 (a INT NOT NULL COMMENT 'the key', b STRING, c DATE) USING delta
PARTITIONED BY (c) COMMENT 'first table' TBLPROPERTIES ('delta.appendOnly' = 'false', 'x.y' = 'z');

-- check: expect [('delta.appendOnly', 'false'), ('delta.enableChangeDataFeed', 'true'), ('delta.minReaderVersion', '1'), ('delta.minWriterVersion', '4'), ('x.y', 'z')]
SHOW TBLPROPERTIES t1;

-- check: expect [('x.y', 'z')]
SHOW TBLPROPERTIES t1 ('x.y');

-- check: expect [('a', 'int', 'the key'), ('b', 'string', None), ('c', 'date', None), ('# Partition Information', '', None), ('# col_name', 'data_type', 'comment'), ('c', 'date', None)]
DESCRIBE TABLE t1;

-- IF NOT EXISTS on an existing table does nothing.
-- check: history t1 0 CREATE TABLE
CREATE TABLE IF NOT EXISTS t1 (z INT) USING delta;

-- check: error TableAlreadyExistsError t1.*already exists
CREATE TABLE t1 (z INT) USING delta;

-- check: table t1
INSERT INTO t1 VALUES (1, 'one', DATE '2024-01-01'), (2, 'two', DATE '2024-01-02');

-- CTAS, partitioned, with properties and a comment.
-- check: table t2
-- check: history t2 0 CREATE TABLE AS SELECT
-- duckdb: CREATE TABLE t2 AS SELECT a * 10 AS a, b, c FROM t1
CREATE TABLE t2 USING delta PARTITIONED BY (b) COMMENT 'from t1' TBLPROPERTIES ('k' = 'v')
AS SELECT a * 10 AS a, b, c FROM t1;

-- check: match k=v
DESCRIBE EXTENDED t2;

-- check: match from t1
DESCRIBE DETAIL t2;

-- CREATE OR REPLACE with columns: a new version of the same table, history kept.
-- check: table t2
-- check: history t2 1 CREATE OR REPLACE TABLE
-- duckdb: DROP TABLE t2; CREATE TABLE t2 (x BIGINT, y STRING)
CREATE OR REPLACE TABLE t2 (x BIGINT, y STRING) USING delta;

-- check: count 2
DESCRIBE HISTORY t2;

-- check: api sqlext.read(spark, loc('t2'), versionAsOf=0)
SELECT * FROM t2 VERSION AS OF 0;

-- CREATE OR REPLACE ... AS SELECT: the next version again.
-- check: table t2
-- check: history t2 2 CREATE OR REPLACE TABLE AS SELECT
-- duckdb: DROP TABLE t2; CREATE TABLE t2 AS SELECT a AS x, upper(b) AS y FROM t1
CREATE OR REPLACE TABLE t2 USING delta AS SELECT a AS x, upper(b) AS y FROM t1;

-- check: table t2
-- duckdb: INSERT INTO t2 VALUES (3, 'THREE')
INSERT INTO t2 VALUES (3, 'THREE');

-- A new table under CREATE OR REPLACE.
-- check: table t3
-- check: history t3 0 CREATE OR REPLACE TABLE AS SELECT
-- duckdb: CREATE TABLE t3 AS SELECT 1 AS one
CREATE OR REPLACE TABLE t3 USING delta AS SELECT 1 AS one;

-- An external table: LOCATION, then DROP keeps the data.
-- check: table ext
-- duckdb: CREATE TABLE ext (k INT, v STRING)
CREATE TABLE ext (k INT, v STRING) USING delta LOCATION '${tmp}/ext';

-- check: table ext
INSERT INTO ext VALUES (1, 'x'), (2, 'y');

-- check: match Type\|EXTERNAL
DESCRIBE EXTENDED ext;

-- check: table delta.`${tmp}/ext` = ext
-- duckdb: -
DROP TABLE ext;

-- check: error AnalysisException ext
SELECT * FROM ext;

-- Registering the existing location again, without columns.
-- check: table ext
-- duckdb: -
CREATE TABLE ext USING delta LOCATION '${tmp}/ext';

-- check: error AnalysisException do not match the existing table
CREATE TABLE ext2 (k STRING) USING delta LOCATION '${tmp}/ext';

-- A path table with CTAS, read back by path.
-- check: table delta.`${tmp}/p1` = p1
-- duckdb: CREATE TABLE p1 AS SELECT * FROM t1 WHERE a > 1
CREATE TABLE delta.`${tmp}/p1` USING delta AS SELECT * FROM t1 WHERE a > 1;

-- check: rows
-- duckdb: SELECT count(*) FROM p1
SELECT count(*) FROM delta.`${tmp}/p1`;

-- check: error UnsupportedOperationError path table has no name to drop
DROP TABLE delta.`${tmp}/p1`;

-- USING delta may be left out when the session's default source is delta.
-- check: expect [('spark.sql.sources.default', 'delta')]
SET spark.sql.sources.default = delta;

-- check: table t4
-- duckdb: CREATE TABLE t4 (n INT)
CREATE TABLE t4 (n INT);

-- check: expect [('spark.sql.sources.default', 'parquet')]
SET spark.sql.sources.default = parquet;

-- ALTER TABLE
-- check: table t1
-- check: history t1 2 ADD COLUMNS
-- duckdb: ALTER TABLE t1 ADD COLUMN d DOUBLE; ALTER TABLE t1 ADD COLUMN e STRING
ALTER TABLE t1 ADD COLUMNS (d DOUBLE COMMENT 'new', e STRING);

-- check: table t1
-- duckdb: INSERT INTO t1 VALUES (3, 'three', DATE '2024-01-03', 0.5, 'e')
INSERT INTO t1 VALUES (3, 'three', DATE '2024-01-03', 0.5, 'e');

-- check: table t1
-- duckdb: ALTER TABLE t1 ADD COLUMN f BIGINT
ALTER TABLE t1 ADD COLUMN f BIGINT;

-- check: error AnalysisException already exist
ALTER TABLE t1 ADD COLUMNS (b INT);

-- check: history t1 5 SET TBLPROPERTIES
ALTER TABLE t1 SET TBLPROPERTIES ('owner' = 'me', delta.logRetentionDuration = 'interval 30 days');

-- check: expect [('owner', 'me')]
SHOW TBLPROPERTIES t1 (owner);

-- check: error UnsupportedOperationError needs column mapping
ALTER TABLE t1 DROP COLUMN b;

-- check: table t5
-- duckdb: ALTER TABLE t3 RENAME TO t5
ALTER TABLE t3 RENAME TO t5;

-- check: error AnalysisException t3
SELECT * FROM t3;

-- The old name is free again.
-- check: table t3
-- duckdb: CREATE TABLE t3 (q INT)
CREATE TABLE t3 (q INT) USING delta;

-- A managed table's DROP deletes its data.
-- check: expect []
-- duckdb: DROP TABLE t4
DROP TABLE t4;

-- check: error AnalysisException t4
DESCRIBE TABLE t4;

-- check: expect []
DROP TABLE IF EXISTS t4;

-- check: error AnalysisException t4
DROP TABLE t4;

-- Schemas
-- check: expect []
CREATE SCHEMA ddl_extra;

-- check: error AnalysisException already exists
CREATE SCHEMA ddl_extra;

-- check: expect []
CREATE SCHEMA IF NOT EXISTS ddl_extra;

-- check: table ddl_extra.t
-- duckdb: CREATE SCHEMA ddl_extra; CREATE TABLE ddl_extra.t AS SELECT 7 AS seven
CREATE TABLE ddl_extra.t USING delta AS SELECT 7 AS seven;

-- check: expect [('ddl_extra', 't', False)]
SHOW TABLES IN ddl_extra;

-- check: error AnalysisException not empty
DROP SCHEMA ddl_extra;

-- check: expect []
DROP SCHEMA ddl_extra CASCADE;

-- check: error AnalysisException ddl_extra
SELECT * FROM ddl_extra.t;

-- check: error UnsupportedOperationError DEFAULT
CREATE TABLE bad (a INT DEFAULT 1) USING delta;

-- check: error AnalysisException give either columns or AS SELECT
CREATE TABLE bad (a INT) USING delta AS SELECT 1 AS a;
