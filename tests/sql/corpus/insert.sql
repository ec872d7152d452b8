-- INSERT INTO / OVERWRITE: VALUES and queries, column lists, static and dynamic partition
-- overwrite, REPLACE WHERE, store-assignment casts, errors that leave the table unchanged.

-- check: table events
-- duckdb: CREATE TABLE events (id BIGINT, kind STRING, amount DOUBLE, day STRING)
CREATE TABLE events (id BIGINT, kind STRING, amount DOUBLE, day STRING)
USING delta PARTITIONED BY (day);

-- check: table events
INSERT INTO events VALUES (1, 'a', 1.5, 'd1'), (2, 'b', 2.5, 'd1'), (3, 'a', 3.5, 'd2');

-- check: table events
-- duckdb: INSERT INTO events VALUES (4, 'c', 4.5, 'd3')
INSERT INTO TABLE events VALUES (4, 'c', 4.5, 'd3');

-- Ints and decimals are cast to the table's types (Spark's ANSI store assignment).
-- check: table events
-- duckdb: INSERT INTO events VALUES (5, 'd', 5, 'd3')
INSERT INTO events SELECT CAST(5 AS INT), 'd', CAST(5 AS DECIMAL(3, 0)), 'd3';

-- A column list: the others are NULL.
-- check: table events
INSERT INTO events (id, day) VALUES (6, 'd4');

-- check: table events
INSERT INTO events (day, kind, id) SELECT 'd4', 'z', 7;

-- A static partition: the query gives the other columns.
-- check: table events
-- duckdb: INSERT INTO events VALUES (8, 'p', 8.0, 'd5')
INSERT INTO events PARTITION (day = 'd5') SELECT 8, 'p', 8.0;

-- check: table events
-- duckdb: INSERT INTO events (id, kind, day) VALUES (9, 'q', 'd5')
INSERT INTO events PARTITION (day = 'd5') (id, kind) VALUES (9, 'q');

-- A dynamic partition column comes from the query.
-- check: table events
-- duckdb: INSERT INTO events VALUES (10, 'r', 1.0, 'd6')
INSERT INTO events PARTITION (day) SELECT 10, 'r', 1.0, 'd6';

-- The source reads the target itself.
-- check: table events
-- duckdb: INSERT INTO events SELECT id + 100, kind, amount, day FROM events WHERE day = 'd1'
INSERT INTO events SELECT id + 100, kind, amount, day FROM events WHERE day = 'd1';

-- check: table events
INSERT INTO events SELECT * FROM (VALUES (11, 'v', 0.5, 'd7'), (12, 'v', NULL, 'd7')) AS v(a, b, c, d);

-- A CTE before INSERT.
-- check: table events
WITH src AS (SELECT id + 1000 AS id, kind, amount, day FROM events WHERE kind = 'a')
INSERT INTO events SELECT * FROM src;

-- BY NAME matches columns by name, in any order.
-- check: table events
-- duckdb: INSERT INTO events BY NAME SELECT 'd8' AS day, 13 AS id, 'n' AS kind
INSERT INTO events BY NAME SELECT 'd8' AS day, 13 AS id, 'n' AS kind;

-- Static partition overwrite replaces that partition only.
-- check: table events
-- duckdb: DELETE FROM events WHERE day = 'd1'; INSERT INTO events VALUES (20, 'o', 0.0, 'd1')
INSERT OVERWRITE events PARTITION (day = 'd1') VALUES (20, 'o', 0.0);

-- REPLACE WHERE replaces the rows matching the predicate, on any column.
-- check: table events
-- duckdb: DELETE FROM events WHERE kind = 'a'; INSERT INTO events VALUES (21, 'a', 9.0, 'd2')
INSERT INTO events REPLACE WHERE kind = 'a' SELECT 21, 'a', 9.0, 'd2';

-- check: table events
-- duckdb: DELETE FROM events WHERE day >= 'd5' AND day <= 'd6'; INSERT INTO events VALUES (22, 'w', 1.0, 'd5')
INSERT INTO events REPLACE WHERE day >= 'd5' AND day <= 'd6' VALUES (22, 'w', 1.0, 'd5');

-- Dynamic partition overwrite: only the partitions in the data are replaced.
-- check: expect [('spark.sql.sources.partitionOverwriteMode', 'dynamic')]
SET spark.sql.sources.partitionOverwriteMode = dynamic;

-- check: table events
-- duckdb: DELETE FROM events WHERE day IN ('d2', 'd9'); INSERT INTO events VALUES (30, 'x', 1.0, 'd2'), (31, 'y', 2.0, 'd9')
INSERT OVERWRITE TABLE events VALUES (30, 'x', 1.0, 'd2'), (31, 'y', 2.0, 'd9');

-- check: table events
-- duckdb: DELETE FROM events WHERE day = 'd7'; INSERT INTO events VALUES (32, 'z', 1.0, 'd7')
INSERT OVERWRITE events PARTITION (day = 'd7') SELECT 32, 'z', 1.0;

-- check: expect [('spark.sql.sources.partitionOverwriteMode', 'static')]
SET spark.sql.sources.partitionOverwriteMode = static;

-- Static mode without a partition spec replaces the whole table.
-- check: table events
-- duckdb: DELETE FROM events; INSERT INTO events SELECT 40 + i, 'all', i * 1.0, 'd1' FROM range(3) t(i)
INSERT OVERWRITE events SELECT 40 + id, 'all', id * 1.0, 'd1' FROM range(3);

-- Errors leave the table as it was.
-- check: error AnalysisException 3 column\(s\) but 4 are expected
INSERT INTO events SELECT 1, 'a', 1.0;

-- check: error AnalysisException cannot safely cast column id from string to bigint
INSERT INTO events VALUES ('x', 'a', 1.0, 'd1');

-- check: error AnalysisException not a partition column
INSERT INTO events PARTITION (kind = 'a') SELECT 1, 1.0, 'd1';

-- check: error AnalysisException unknown column\(s\) \['nope'\]
INSERT INTO events (id, nope) VALUES (1, 2);

-- check: error InvariantViolationError do not satisfy the replaceWhere predicate
INSERT INTO events REPLACE WHERE day = 'd1' VALUES (50, 'bad', 1.0, 'd2');

-- check: table events
SELECT count(*) FROM events;

-- NOT NULL columns refuse NULLs.
-- check: table strict
-- duckdb: CREATE TABLE strict (k INT NOT NULL, v STRING)
CREATE TABLE strict (k INT NOT NULL, v STRING) USING delta;

-- check: error ConstraintViolationError NOT NULL constraint violated for column: k
INSERT INTO strict VALUES (1, 'a'), (NULL, 'b');

-- check: error ConstraintViolationError NOT NULL constraint violated for column: k
INSERT INTO strict (v) VALUES ('c');

-- check: table strict
INSERT INTO strict VALUES (1, 'a');

-- An INSERT into a path table, and an INSERT that reads a path table.
-- check: table delta.`${tmp}/copy` = copy
-- duckdb: CREATE TABLE copy (k INT, v STRING)
CREATE TABLE delta.`${tmp}/copy` (k INT, v STRING) USING delta;

-- check: table delta.`${tmp}/copy` = copy
-- duckdb: INSERT INTO copy SELECT * FROM strict
INSERT INTO delta.`${tmp}/copy` SELECT * FROM strict;

-- check: table strict
-- duckdb: INSERT INTO strict SELECT k + 1, v || '2' FROM copy
INSERT INTO strict SELECT k + 1, v || '2' FROM delta.`${tmp}/copy`;
