-- DESCRIBE HISTORY | DETAIL | [EXTENDED] t, SHOW TABLES | TBLPROPERTIES | CREATE TABLE.

-- check: history d1 0 CREATE TABLE
CREATE TABLE d1 (id BIGINT NOT NULL, name STRING COMMENT 'who', tags ARRAY<STRING>, attrs MAP<STRING, INT>,
  pos STRUCT<x: DOUBLE, `y z`: DOUBLE>, amount DECIMAL(12, 3), at TIMESTAMP, day DATE)
USING delta PARTITIONED BY (day) COMMENT 'described' TBLPROPERTIES ('team' = 'data');

-- check: history d1 1 WRITE
INSERT INTO d1 VALUES (1, 'a', array('x'), map('k', 1), named_struct('x', 1.0D, 'y z', 2.0D), 1.5, TIMESTAMP '2024-01-01 10:00:00', DATE '2024-01-01');

-- check: expect [('id', 'bigint', None), ('name', 'string', 'who'), ('tags', 'array<string>', None), ('attrs', 'map<string,int>', None), ('pos', 'struct<x:double,y z:double>', None), ('amount', 'decimal(12,3)', None), ('at', 'timestamp', None), ('day', 'date', None), ('# Partition Information', '', None), ('# col_name', 'data_type', 'comment'), ('day', 'date', None)]
DESCRIBE d1;

-- check: match ^Type\|MANAGED\|None$
-- check: match ^Provider\|delta\|None$
-- check: match ^Comment\|described\|None$
-- check: match ^Table Properties\|\[delta.enableChangeDataFeed=true,team=data\]
DESCRIBE EXTENDED d1;

-- check: columns format, id, name, description, location, createdAt, lastModified, partitionColumns, clusteringColumns, numFiles, sizeInBytes, properties, minReaderVersion, minWriterVersion, tableFeatures
-- check: match ^delta\|.*\|corpus_describe.d1\|described\|.*\|\['day'\]\|\[\]\|1\|
DESCRIBE DETAIL d1;

-- check: count 2
-- check: columns version, timestamp, userId, userName, operation, operationParameters, job, notebook, clusterId, readVersion, isolationLevel, isBlindAppend, operationMetrics, userMetadata, engineInfo
DESCRIBE HISTORY d1;

-- check: match ^1\|.*\|WRITE\|
-- check: count 1
DESCRIBE HISTORY corpus_describe.d1 LIMIT 1;

-- check: history delta.`${tmp}/dp` 0 CREATE TABLE AS SELECT
CREATE TABLE delta.`${tmp}/dp` USING delta AS SELECT 'p' AS p;

-- check: match ^0\|.*\|CREATE TABLE AS SELECT\|
DESC HISTORY delta.`${tmp}/dp` LIMIT 1;

-- check: match ^CREATE TABLE delta\.`.*/dp` \(p STRING\) USING DELTA
SHOW CREATE TABLE delta.`${tmp}/dp`;

-- check: match ^CREATE TABLE corpus_describe\.d1 \(id BIGINT NOT NULL, name STRING COMMENT 'who', tags ARRAY<STRING>, attrs MAP<STRING, INT>, pos STRUCT<x: DOUBLE, `y z`: DOUBLE>, amount DECIMAL\(12, 3\), at TIMESTAMP, day DATE\) USING DELTA PARTITIONED BY \(day\) COMMENT 'described' TBLPROPERTIES \('delta\.enableChangeDataFeed'='true', 'team'='data'\)$
SHOW CREATE TABLE d1;

-- check: expect [('delta.enableChangeDataFeed', 'true'), ('delta.minReaderVersion', '1'), ('delta.minWriterVersion', '4'), ('team', 'data')]
SHOW TBLPROPERTIES d1;

-- check: expect [('nope', 'Table corpus_describe.d1 does not have property: nope')]
SHOW TBLPROPERTIES d1 ('nope');

-- check: history d2 0 CREATE TABLE AS SELECT
CREATE TABLE d2 USING delta AS SELECT 1 AS one;

-- check: expect [('corpus_describe', 'd1', False), ('corpus_describe', 'd2', False)]
SHOW TABLES;

-- check: expect [('corpus_describe', 'd2', False)]
SHOW TABLES IN corpus_describe LIKE 'd2|x*';

-- check: expect [('corpus_describe', 'd1', False)]
SHOW TABLES FROM corpus_describe 'D1';

-- check: expect []
SHOW TABLES LIKE 'nothing*';

-- check: error TableNotFoundError not a sqlext
DESCRIBE HISTORY no_such_table;

-- check: error TableNotFoundError not a sqlext
DESCRIBE DETAIL no_such_table;

-- check: error AnalysisException not found
SHOW TABLES IN no_such_schema;
