-- Views over sqlext tables show the tables' current data; views over other data are Spark's.

-- check: table base
-- duckdb: CREATE TABLE base (id INT, grp STRING, val DOUBLE)
CREATE TABLE base (id INT, grp STRING, val DOUBLE) USING delta;

-- check: table base
INSERT INTO base VALUES (1, 'a', 1.0), (2, 'a', 2.0), (3, 'b', 3.0);

-- check: expect []
-- duckdb: CREATE VIEW v_all AS SELECT * FROM base
CREATE VIEW v_all AS SELECT * FROM base;

-- check: rows
SELECT * FROM v_all;

-- check: expect []
-- duckdb: CREATE TEMPORARY VIEW tv_sum AS SELECT grp, sum(val) AS total FROM base GROUP BY grp
CREATE TEMPORARY VIEW tv_sum AS SELECT grp, sum(val) AS total FROM base GROUP BY grp;

-- check: rows
SELECT * FROM tv_sum;

-- New rows show up in both views.
-- check: table base
INSERT INTO base VALUES (4, 'b', 4.0), (5, 'c', 5.0);

-- check: rows
SELECT * FROM v_all;

-- check: rows
SELECT * FROM tv_sum;

-- A view with column names, over a join of a table and a view.
-- check: expect []
-- duckdb: CREATE VIEW v_named (ident, total) AS SELECT b.id, s.total FROM base b JOIN tv_sum s ON b.grp = s.grp
CREATE VIEW v_named (ident, total) AS SELECT b.id, s.total FROM base b JOIN v_all x ON b.id = x.id JOIN (SELECT grp, sum(val) AS total FROM base GROUP BY grp) s ON b.grp = s.grp;

-- check: rows
SELECT ident, total FROM v_named WHERE ident > 1;

-- check: columns ident, total
SELECT * FROM v_named;

-- A view of a view, qualified, in a CTE and a subquery.
-- check: expect []
-- duckdb: CREATE VIEW v_big AS SELECT * FROM v_all WHERE val > 2
CREATE OR REPLACE VIEW v_big AS SELECT * FROM corpus_views.v_all WHERE val > 2;

-- check: rows
WITH x AS (SELECT * FROM v_big) SELECT count(*) FROM x WHERE id IN (SELECT id FROM v_all);

-- A view over an old version stays on that version.
-- check: expect []
CREATE OR REPLACE TEMPORARY VIEW tv_v1 AS SELECT * FROM base VERSION AS OF 1;

-- check: api sqlext.read(spark, loc('base'), versionAsOf=1)
SELECT * FROM tv_v1;

-- Replacing a view.
-- check: expect []
-- duckdb: CREATE OR REPLACE VIEW v_all AS SELECT id FROM base WHERE grp = 'a'
CREATE OR REPLACE VIEW v_all AS SELECT id FROM base WHERE grp = 'a';

-- check: rows
SELECT * FROM v_all;

-- check: error TableAlreadyExistsError already exists
CREATE VIEW v_all AS SELECT 1 AS one FROM base;

-- check: expect []
CREATE VIEW IF NOT EXISTS v_all AS SELECT 1 AS one FROM base;

-- check: match ^\|v_all\|False$|corpus_views\|v_all\|False
SHOW TABLES LIKE 'v_*';

-- check: match ^id\|int
DESCRIBE v_all;

-- Views cannot be written, time-travelled or dropped as tables.
-- check: error AnalysisException is a view
INSERT INTO v_all VALUES (1);

-- check: error UnsupportedOperationError time travel
SELECT * FROM v_all VERSION AS OF 1;

-- check: error AnalysisException DROP VIEW
DROP TABLE v_all;

-- A view over plain Spark data is Spark's own.
-- check: expect []
CREATE TEMPORARY VIEW spark_only AS SELECT id FROM range(3);

-- check: expect [(0,), (1,), (2,)]
SELECT * FROM spark_only;

-- check: expect []
DROP VIEW spark_only;

-- check: expect []
DROP VIEW tv_sum;

-- check: error AnalysisException tv_sum
SELECT * FROM tv_sum;

-- check: expect []
DROP VIEW IF EXISTS tv_sum;

-- check: expect []
DROP VIEW v_named;

-- check: error AnalysisException v_named
SELECT * FROM v_named;
