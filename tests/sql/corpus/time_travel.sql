-- Time travel: VERSION AS OF, @v, TIMESTAMP AS OF, in every query position; history.

-- check: table tt
-- duckdb: CREATE TABLE tt (k INT, v STRING)
CREATE TABLE tt (k INT, v STRING) USING delta;

-- check: table tt
INSERT INTO tt VALUES (1, 'a'), (2, 'b');

-- check: table tt
INSERT INTO tt VALUES (3, 'c');

-- check: table tt
-- duckdb: DELETE FROM tt; INSERT INTO tt VALUES (9, 'z')
INSERT OVERWRITE tt VALUES (9, 'z');

-- check: api sqlext.read(spark, loc('tt'), versionAsOf=1)
SELECT * FROM tt VERSION AS OF 1;

-- check: api sqlext.read(spark, loc('tt'), versionAsOf=2)
SELECT * FROM tt@v2;

-- check: api sqlext.read(spark, loc('tt'), versionAsOf=0)
SELECT * FROM tt SYSTEM_VERSION AS OF 0;

-- check: expect [(3,)]
SELECT count(*) FROM tt VERSION AS OF 2 AS old;

-- The version may be an expression.
-- check: api sqlext.read(spark, loc('tt'), versionAsOf=2)
SELECT * FROM tt VERSION AS OF 1 + 1;

-- check: api sqlext.read(spark, loc('tt'), versionAsOf=1)
SELECT * FROM tt TIMESTAMP AS OF '${ts:tt:1}';

-- check: api sqlext.read(spark, loc('tt'), versionAsOf=2)
SELECT * FROM tt TIMESTAMP AS OF CAST('${ts:tt:2}' AS TIMESTAMP) + INTERVAL 0 SECONDS;

-- check: api sqlext.read(spark, loc('tt'))
SELECT * FROM tt TIMESTAMP AS OF '${ts:tt:3}';

-- After the latest commit: an error, as in delta-spark.
-- check: error TimestampOutOfRangeError after the latest commit
SELECT * FROM tt TIMESTAMP AS OF current_timestamp() + INTERVAL 1 DAY;

-- Old and new versions side by side: a join, a union, a CTE, a subquery.
-- check: expect [(1, 'a', None), (2, 'b', None)]
SELECT o.k, o.v, n.v AS now FROM tt VERSION AS OF 1 AS o LEFT JOIN tt AS n ON o.k = n.k;

-- check: expect [(1,), (2,), (3,), (9,)]
SELECT k FROM tt VERSION AS OF 2 UNION SELECT k FROM tt;

-- check: expect [(3, 'c')]
WITH v1 AS (SELECT * FROM tt VERSION AS OF 1), v2 AS (SELECT * FROM tt VERSION AS OF 2)
SELECT * FROM v2 WHERE k NOT IN (SELECT k FROM v1);

-- check: expect [(2,)]
SELECT count(*) FROM (SELECT * FROM tt VERSION AS OF 1) AS q;

-- Restoring rows of an old version with INSERT ... SELECT.
-- check: table tt
-- duckdb: INSERT INTO tt VALUES (1, 'a'), (2, 'b'), (3, 'c')
INSERT INTO tt SELECT * FROM tt VERSION AS OF 2;

-- check: count 5
-- check: match ^0\|.*\|CREATE TABLE\|
DESCRIBE HISTORY tt;

-- check: count 2
DESCRIBE HISTORY tt LIMIT 2;

-- check: error VersionNotFoundException
SELECT * FROM tt VERSION AS OF 99;

-- check: error TimestampOutOfRangeError
SELECT * FROM tt TIMESTAMP AS OF '2000-01-01 00:00:00';

-- check: error AnalysisException must be a non-negative integer
SELECT * FROM tt VERSION AS OF 'x';
