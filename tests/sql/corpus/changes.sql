-- Change feeds in SQL: t CHANGES FROM ..., table_changes(...), db.t.changes, compared with the
-- Python API (sqlext.changes) and with literal rows.

-- check: history cf 0 CREATE TABLE
CREATE TABLE cf (k INT, v STRING) USING delta;

-- check: history cf 1 WRITE
INSERT INTO cf VALUES (1, 'a'), (2, 'b'), (3, 'c');

-- check: history cf 2 UPDATE
UPDATE cf SET v = 'B' WHERE k = 2;

-- check: history cf 3 DELETE
DELETE FROM cf WHERE k = 3;

-- check: history cf 4 WRITE
INSERT INTO cf VALUES (4, 'd');

-- The default deduplication mode of CHANGES FROM is dropCarryovers.
-- check: api sqlext.changes(spark, loc('cf'), 1, deduplicationMode='dropCarryovers')
SELECT * FROM cf CHANGES FROM VERSION 1;

-- check: expect [(2, 'b', 'update_preimage', 2), (2, 'B', 'update_postimage', 2), (3, 'c', 'delete', 3)]
SELECT k, v, _change_type, _commit_version FROM cf CHANGES FROM VERSION 2 TO VERSION 3;

-- check: api sqlext.changes(spark, loc('cf'), 1, 4, deduplicationMode='netChanges')
SELECT * FROM cf CHANGES FROM VERSION 1 TO VERSION 4 WITH (deduplicationMode = 'netChanges');

-- check: api sqlext.changes(spark, loc('cf'), 2, deduplicationMode='none', computeUpdates=True, identifierColumns=['k'])
SELECT * FROM cf CHANGES FROM VERSION 2 WITH (deduplicationMode = 'none', computeUpdates = 'true', identifierColumns = 'k');

-- check: api sqlext.changes(spark, loc('cf'), startingTimestamp='${ts:cf:3}', deduplicationMode='dropCarryovers')
SELECT * FROM cf CHANGES FROM TIMESTAMP '${ts:cf:3}';

-- check: api sqlext.changes(spark, loc('cf'), startingTimestamp='${ts:cf:2}', endingTimestamp='${ts:cf:3}', deduplicationMode='dropCarryovers')
SELECT * FROM cf CHANGES FROM TIMESTAMP '${ts:cf:2}' TO TIMESTAMP '${ts:cf:3}' AS c;

-- table_changes: raw changes; numbers are versions, strings timestamps.
-- check: api sqlext.changes(spark, loc('cf'), 2)
SELECT * FROM table_changes('cf', 2);

-- check: api sqlext.changes(spark, loc('cf'), 1, 3)
SELECT * FROM table_changes('corpus_changes.cf', 1, 3);

-- check: api sqlext.changes(spark, loc('cf'), startingTimestamp='${ts:cf:4}')
SELECT * FROM table_changes('cf', '${ts:cf:4}');

-- db.t.changes: the raw feed; predicates on _commit_version bound the range.
-- check: api sqlext.changes(spark, loc('cf'), 0)
SELECT * FROM corpus_changes.cf.changes;

-- check: api sqlext.changes(spark, loc('cf'), 2, 3)
SELECT * FROM corpus_changes.cf.changes WHERE _commit_version BETWEEN 2 AND 3;

-- check: expect [(4, 'd', 'insert')]
SELECT k, v, _change_type FROM cf.changes WHERE _commit_version > 3 AND _change_type = 'insert';

-- check: expect [(1, 'a', 'insert')]
SELECT c.k, c.v, c._change_type FROM cf.changes AS c WHERE c._commit_version = 1 AND c.k < 2;

-- check: expect [('insert', 4), ('update_preimage', 1), ('update_postimage', 1), ('delete', 1)]
SELECT _change_type, count(*) AS n FROM cf CHANGES FROM VERSION 0 GROUP BY _change_type;

-- Changes joined with the current table, and in a CTE.
-- check: expect [(2, 'B', 'B'), (1, 'a', 'a')]
SELECT c.k, c.v, t.v AS now FROM cf CHANGES FROM VERSION 1 TO VERSION 2 AS c JOIN cf AS t ON c.k = t.k
WHERE c._change_type IN ('insert', 'update_postimage') AND c._commit_version = (SELECT max(_commit_version) FROM cf.changes WHERE k = c.k AND _commit_version <= 2);

-- check: expect [(3,)]
WITH deleted AS (SELECT k FROM cf CHANGES FROM VERSION 0 WHERE _change_type = 'delete')
SELECT k FROM deleted;

-- check: error ChangeDataFeedError
SELECT * FROM cf CHANGES FROM VERSION 9;

-- check: error AnalysisException unknown option 'nope'
SELECT * FROM cf CHANGES FROM VERSION 1 WITH (nope = 'x');

-- check: error AnalysisException not a sqlext table
SELECT * FROM no_such CHANGES FROM VERSION 1;
