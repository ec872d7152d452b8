-- Statements that do not touch sqlext tables go to Spark unchanged; mixed statements read
-- sqlext tables through bound views.

-- check: expect [('spark.sql.shuffle.partitions', '3')]
SET spark.sql.shuffle.partitions = 3;

-- check: expect [('spark.sql.shuffle.partitions', '3')]
SET spark.sql.shuffle.partitions;

-- check: expect [('spark.sql.shuffle.partitions', '2')]
SET spark.sql.shuffle.partitions = 2;

-- A plain parquet table lives in Spark's catalog.
-- check: expect []
-- duckdb: CREATE TABLE plain (id INT, label STRING)
CREATE TABLE plain (id INT, label STRING) USING parquet;

-- check: expect []
-- duckdb: INSERT INTO plain VALUES (1, 'one'), (2, 'two'), (3, 'three')
INSERT INTO plain VALUES (1, 'one'), (2, 'two'), (3, 'three');

-- check: rows
SELECT * FROM plain;

-- check: table facts
-- duckdb: CREATE TABLE facts (id INT, score INT)
CREATE TABLE facts (id INT, score INT) USING delta;

-- check: table facts
INSERT INTO facts SELECT id, id * 10 FROM plain;

-- A join of a Spark table and a sqlext table.
-- check: rows
SELECT p.label, f.score FROM plain p JOIN facts f ON p.id = f.id WHERE f.score > 10;

-- A parquet CTAS reading a sqlext table, and an INSERT into parquet from a sqlext table.
-- check: expect []
-- duckdb: CREATE TABLE plain_copy AS SELECT * FROM facts
CREATE TABLE plain_copy USING parquet AS SELECT * FROM facts;

-- check: rows
SELECT * FROM plain_copy;

-- check: expect []
-- duckdb: INSERT INTO plain_copy SELECT id + 10, score FROM facts
INSERT INTO plain_copy SELECT id + 10, score FROM facts;

-- check: rows
SELECT * FROM plain_copy;

-- Spark functions, VALUES, table-valued functions.
-- check: rows
SELECT abs(-3) AS a, greatest(1, 5, 2) AS g, lower('ABC') AS l;

-- check: expect [(0,), (1,), (2,)]
SELECT * FROM range(3);

-- check: rows
VALUES (1, 'x'), (2, 'y');

-- check: expect [(6,)]
SELECT sum(score) / 10 FROM facts WHERE id IN (SELECT id FROM range(1, 4));

-- Statements sqlglot does not parse still reach Spark.
-- check: match default
SHOW DATABASES;

-- check: match ^id$
SHOW COLUMNS IN plain;

-- check: match ^Project|== Physical Plan ==
EXPLAIN SELECT * FROM plain;

-- ... and say so when they name a sqlext table.
-- check: error UnsupportedOperationError not supported for sqlext tables
SHOW COLUMNS IN facts;

-- check: error UnsupportedOperationError not supported for sqlext tables
ALTER TABLE facts UNSET TBLPROPERTIES ('x');

-- check: error UnsupportedOperationError not supported for sqlext tables
CACHE TABLE facts;

-- A temporary Spark view over plain data, shadowing nothing.
-- check: expect []
CREATE OR REPLACE TEMPORARY VIEW pv AS SELECT id FROM plain WHERE id > 1;

-- check: expect [(2,), (3,)]
SELECT * FROM pv;

-- check: error ParseError Syntax error
SELEC 1;

-- check: expect []
DROP TABLE plain_copy;

-- check: expect []
DROP TABLE plain;
