-- DELETE, UPDATE, MERGE and TRUNCATE through SQL; DuckDB runs the same statements on the same
-- rows.

-- check: table acct
-- duckdb: CREATE TABLE acct (id INT, owner STRING, balance DOUBLE, region STRING)
CREATE TABLE acct (id INT, owner STRING, balance DOUBLE, region STRING)
USING delta PARTITIONED BY (region);

-- check: table acct
INSERT INTO acct VALUES
  (1, 'ann', 10.0, 'eu'), (2, 'bob', 20.0, 'eu'), (3, 'cid', 30.0, 'us'),
  (4, 'dee', NULL, 'us'), (5, 'eve', 50.0, 'ap'), (6, 'fay', 60.0, 'ap'),
  (7, 'gus', 70.0, NULL), (8, 'hal', 80.0, 'us');

-- check: table changes_src
-- duckdb: CREATE TABLE changes_src (id INT, owner STRING, balance DOUBLE, region STRING, op STRING)
CREATE TABLE changes_src (id INT, owner STRING, balance DOUBLE, region STRING, op STRING) USING delta;

-- check: table changes_src
INSERT INTO changes_src VALUES
  (2, 'bob', 25.0, 'eu', 'u'), (3, 'cid', NULL, 'us', 'd'), (9, 'ivy', 90.0, 'eu', 'i'),
  (10, 'jon', 100.0, 'us', 'i'), (5, 'eve', 55.0, 'ap', 'u');

-- A data predicate.
-- check: table acct
-- check: expect [(1,)]
DELETE FROM acct WHERE balance > 75;

-- A partition predicate, and an alias.
-- check: table acct
-- duckdb: DELETE FROM acct AS a WHERE a.region = 'ap' AND a.id = 6
DELETE FROM acct AS a WHERE a.region = 'ap' AND a.id = 6;

-- Subqueries in a DELETE condition are refused, as delta-spark does; the message names the
-- table, not sqlext's temporary view.
-- check: error UnsupportedOperationError subqueries are not supported in the DELETE condition "id IN \(SELECT id FROM changes_src
DELETE FROM acct WHERE id IN (SELECT id FROM changes_src WHERE op = 'd');

-- check: table acct
-- duckdb: DELETE FROM acct WHERE id = 3
DELETE FROM acct WHERE id = 3;

-- Nothing matches: nothing changes.
-- check: table acct
-- check: expect [(0,)]
DELETE FROM acct WHERE owner = 'nobody';

-- check: table acct
-- check: expect [(2,)]
UPDATE acct SET balance = balance * 2 WHERE region = 'eu';

-- check: table acct
-- duckdb: UPDATE acct AS x SET balance = coalesce(x.balance, 0) + 1, owner = upper(x.owner) WHERE x.balance IS NULL OR x.id = 7
UPDATE acct AS x SET balance = coalesce(x.balance, 0) + 1, x.owner = upper(x.owner) WHERE x.balance IS NULL OR x.id = 7;

-- check: table acct
UPDATE acct SET region = 'eu' WHERE region IS NULL;

-- check: table acct
-- duckdb: UPDATE acct SET owner = owner || '*'
UPDATE acct SET owner = concat(owner, '*');

-- MERGE with every kind of clause.
-- check: table acct
-- check: columns num_affected_rows, num_updated_rows, num_deleted_rows, num_inserted_rows
-- check: expect [(5, 3, 0, 2)]
-- duckdb: MERGE INTO acct AS t USING changes_src AS s ON t.id = s.id
-- duckdb:   WHEN MATCHED AND s.op = 'd' THEN DELETE
-- duckdb:   WHEN MATCHED AND s.op = 'u' THEN UPDATE SET balance = s.balance, owner = s.owner
-- duckdb:   WHEN NOT MATCHED AND s.op = 'i' THEN INSERT (id, owner, balance, region) VALUES (s.id, s.owner, s.balance, s.region)
-- duckdb:   WHEN NOT MATCHED BY SOURCE AND t.region = 'us' THEN UPDATE SET balance = 0
MERGE INTO acct AS t USING changes_src AS s ON t.id = s.id
  WHEN MATCHED AND s.op = 'd' THEN DELETE
  WHEN MATCHED AND s.op = 'u' THEN UPDATE SET t.balance = s.balance, owner = s.owner
  WHEN NOT MATCHED AND s.op = 'i' THEN INSERT (id, owner, balance, region) VALUES (s.id, s.owner, s.balance, s.region)
  WHEN NOT MATCHED BY SOURCE AND t.region = 'us' THEN UPDATE SET balance = 0;

-- MERGE from a query, UPDATE SET * / INSERT *, NOT MATCHED BY SOURCE DELETE.
-- check: table acct
-- duckdb: MERGE INTO acct USING (SELECT id, owner || '!' AS owner, balance, region FROM changes_src WHERE op <> 'd') AS s ON acct.id = s.id
-- duckdb:   WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *
-- duckdb:   WHEN NOT MATCHED BY SOURCE AND acct.balance < 25 THEN DELETE
MERGE INTO acct USING (SELECT id, owner || '!' AS owner, balance, region FROM changes_src WHERE op <> 'd') AS s
ON acct.id = s.id
  WHEN MATCHED THEN UPDATE SET *
  WHEN NOT MATCHED THEN INSERT *
  WHEN NOT MATCHED BY SOURCE AND acct.balance < 25 THEN DELETE;

-- A MERGE source read at an older version of the target itself.
-- check: table acct
-- duckdb: INSERT INTO acct VALUES (1, 'ann', 10.0, 'eu'), (3, 'cid', 30.0, 'us'), (4, 'dee', NULL, 'us'),
-- duckdb:   (6, 'fay', 60.0, 'ap'), (8, 'hal', 80.0, 'us')
MERGE INTO acct AS t USING acct VERSION AS OF 1 AS old ON t.id = old.id
  WHEN NOT MATCHED THEN INSERT *;

-- Several source rows matching one target row: refused, nothing committed.
-- check: error MultipleSourceRowMatchError
MERGE INTO acct AS t USING (SELECT 1 AS id UNION ALL SELECT 1 AS id) AS s ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET balance = -1;

-- check: table acct
SELECT * FROM acct;

-- Schema evolution adds the source's new column.
-- check: table acct
-- duckdb: ALTER TABLE acct ADD COLUMN tier STRING;
-- duckdb: MERGE INTO acct AS t USING (SELECT 9 AS id, 'ivy' AS owner, 1.0 AS balance, 'eu' AS region, 'gold' AS tier) AS s ON t.id = s.id
-- duckdb:   WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *
MERGE WITH SCHEMA EVOLUTION INTO acct AS t
USING (SELECT 9 AS id, 'ivy' AS owner, 1.0 AS balance, 'eu' AS region, 'gold' AS tier) AS s
ON t.id = s.id
  WHEN MATCHED THEN UPDATE SET *
  WHEN NOT MATCHED THEN INSERT *;

-- DML on a path table.
-- check: table delta.`${tmp}/ledger` = ledger
-- duckdb: CREATE TABLE ledger AS SELECT id, balance FROM acct
CREATE TABLE delta.`${tmp}/ledger` USING delta AS SELECT id, balance FROM acct;

-- check: table delta.`${tmp}/ledger` = ledger
-- duckdb: UPDATE ledger SET balance = -balance WHERE id > 5
UPDATE delta.`${tmp}/ledger` SET balance = -balance WHERE id > 5;

-- check: table delta.`${tmp}/ledger` = ledger
-- duckdb: DELETE FROM ledger WHERE balance < 0
DELETE FROM delta.`${tmp}/ledger` WHERE balance < 0;

-- check: error AnalysisException nope
DELETE FROM acct WHERE nope = 1;

-- check: error AnalysisException nope
UPDATE acct SET nope = 1;

-- check: table acct
-- duckdb: DELETE FROM acct
TRUNCATE TABLE acct;
