-- RESTORE, OPTIMIZE and VACUUM route to DeltaTable's methods.

-- check: table m
-- duckdb: CREATE TABLE m (k INT, p STRING)
CREATE TABLE m (k INT, p STRING) USING delta PARTITIONED BY (p);

-- check: table m
INSERT INTO m VALUES (1, 'a'), (2, 'b');

-- check: table m
INSERT INTO m VALUES (3, 'a');

-- check: table m
-- duckdb: DELETE FROM m WHERE k = 1
DELETE FROM m WHERE k = 1;

-- check: table m
-- check: history m 4 RESTORE
-- duckdb: DELETE FROM m; INSERT INTO m VALUES (1, 'a'), (2, 'b'), (3, 'a')
-- needs: restore
RESTORE TABLE m TO VERSION AS OF 2;

-- check: table m
-- check: history m 5 RESTORE
-- duckdb: DELETE FROM m; INSERT INTO m VALUES (1, 'a'), (2, 'b')
-- needs: restore
RESTORE m TIMESTAMP AS OF '${ts:m:1}';

-- check: table m
-- duckdb: INSERT INTO m VALUES (4, 'a'), (5, 'b')
INSERT INTO m SELECT 4, 'a' UNION ALL SELECT 5, 'b';

-- check: table m
-- check: history m 7 OPTIMIZE
-- duckdb: -
-- needs: optimize
OPTIMIZE m WHERE p = 'a';

-- check: table m
-- duckdb: -
-- needs: optimize
OPTIMIZE m ZORDER BY (k);

-- check: columns path
-- needs: vacuum
VACUUM m RETAIN 168 HOURS;

-- check: error TableNotFoundError not a sqlext
VACUUM no_such_table;
