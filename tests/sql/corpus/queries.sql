-- Reads of sqlext tables in every query position: filters, joins, aggregates, windows,
-- subqueries, CTEs, set operations. DuckDB runs the same statements on the same rows.

-- check: table people
-- duckdb: CREATE TABLE people (id INT, name STRING, dept STRING, salary DOUBLE, hired DATE)
CREATE TABLE people (id INT, name STRING, dept STRING, salary DOUBLE, hired DATE) USING delta;

-- check: table people
INSERT INTO people VALUES
  (1, 'ann', 'eng', 100.0, DATE '2020-01-15'),
  (2, 'bob', 'eng', 80.0, DATE '2021-03-01'),
  (3, 'cid', 'ops', 60.0, DATE '2019-07-30'),
  (4, 'dee', 'ops', NULL, DATE '2022-11-11'),
  (5, 'eve', 'sales', 70.0, NULL),
  (6, 'fay', NULL, 50.0, DATE '2023-02-02');

-- check: table orders
-- duckdb: CREATE TABLE orders (oid INT, pid INT, amount DECIMAL(10, 2), status STRING)
CREATE TABLE orders (oid INT, pid INT, amount DECIMAL(10, 2), status STRING)
USING delta PARTITIONED BY (status);

-- check: table orders
INSERT INTO orders VALUES
  (10, 1, 12.50, 'open'), (11, 1, 7.25, 'done'), (12, 2, 100.00, 'done'),
  (13, 3, 3.10, 'open'), (14, 9, 1.00, 'open'), (15, NULL, 2.00, 'void');

-- check: rows
SELECT * FROM people;

-- check: rows
SELECT id, name FROM people WHERE dept = 'eng' AND salary > 90;

-- check: rows
SELECT name, salary * 2 AS double_pay, salary / 3 AS third FROM people WHERE salary IS NOT NULL;

-- check: rows ordered
SELECT id, name FROM people ORDER BY salary DESC NULLS LAST, id LIMIT 3;

-- check: rows
SELECT DISTINCT dept FROM people;

-- check: rows
SELECT dept, count(*) AS n, sum(salary) AS total, avg(salary) AS mean, max(hired) AS latest
FROM people GROUP BY dept;

-- check: rows
SELECT dept, count(*) AS n FROM people GROUP BY dept HAVING count(*) > 1;

-- check: rows
SELECT p.name, o.oid, o.amount FROM people p JOIN orders o ON p.id = o.pid;

-- check: rows
SELECT p.name, o.oid FROM people AS p LEFT JOIN orders AS o ON p.id = o.pid;

-- check: rows
SELECT p.id AS pid, o.oid FROM people p FULL OUTER JOIN orders o ON p.id = o.pid;

-- check: rows
SELECT people.name, orders.status FROM people, orders WHERE people.id = orders.pid;

-- check: rows
SELECT a.name AS a_name, b.name AS b_name FROM people a JOIN people b ON a.dept = b.dept AND a.id < b.id;

-- check: rows
SELECT name FROM people WHERE id IN (SELECT pid FROM orders WHERE status = 'open');

-- check: rows
SELECT name FROM people p WHERE EXISTS (SELECT 1 FROM orders o WHERE o.pid = p.id AND o.amount > 10);

-- check: rows
SELECT name FROM people WHERE id NOT IN (SELECT pid FROM orders WHERE pid IS NOT NULL);

-- check: rows
SELECT name, (SELECT count(*) FROM orders o WHERE o.pid = p.id) AS n_orders FROM people p;

-- check: rows
SELECT q.dept, q.n FROM (SELECT dept, count(*) AS n FROM people GROUP BY dept) AS q WHERE q.n >= 2;

-- check: rows
WITH eng AS (SELECT * FROM people WHERE dept = 'eng'),
     big AS (SELECT * FROM orders WHERE amount > 5)
SELECT eng.name, big.oid FROM eng JOIN big ON eng.id = big.pid;

-- A CTE named like a table shadows the table.
-- check: rows
WITH people AS (SELECT 42 AS id) SELECT id FROM people;

-- check: rows
SELECT id FROM people WHERE dept = 'eng' UNION ALL SELECT pid FROM orders WHERE status = 'open';

-- check: rows
SELECT id FROM people UNION SELECT pid FROM orders WHERE pid IS NOT NULL;

-- check: rows
SELECT id FROM people INTERSECT SELECT pid FROM orders;

-- check: rows
SELECT id FROM people EXCEPT SELECT pid FROM orders;

-- check: rows
SELECT name, dept, row_number() OVER (PARTITION BY dept ORDER BY id) AS rn,
       sum(salary) OVER (PARTITION BY dept) AS dept_total
FROM people;

-- check: rows
SELECT name, CASE WHEN salary >= 80 THEN 'high' WHEN salary IS NULL THEN 'none' ELSE 'low' END AS band
FROM people;

-- check: rows
SELECT upper(name) AS u, length(name) AS l, substring(name, 1, 2) AS s, name || '!' AS e,
       coalesce(dept, 'none') AS d
FROM people;

-- check: rows
SELECT status, sum(amount) AS total, count(*) AS n FROM orders GROUP BY status;

-- Partition column filters.
-- check: rows
SELECT oid FROM orders WHERE status = 'done' OR status = 'void';

-- Qualified with the schema, and the column with schema.table.
-- check: rows
-- duckdb: SELECT people.name FROM people WHERE people.id = 3
SELECT corpus_queries.people.name FROM corpus_queries.people WHERE corpus_queries.people.id = 3;

-- Quoted identifiers, and literals holding quotes, semicolons and comment markers.
-- check: rows
-- duckdb: SELECT "name" AS "the name;--", 'it''s; /* not */ -- a comment' AS lit FROM "people" WHERE "id" = 1
SELECT `name` AS `the name;--`, 'it\'s; /* not */ -- a comment' AS lit FROM `people` WHERE `id` = 1;

-- Comments around and inside a statement.
-- check: rows
/* leading */ SELECT id -- trailing, with a ; semicolon
FROM people /* inner */ WHERE id < 3;

-- check: rows
SELECT count(*) AS n FROM people p1 JOIN people p2 ON p1.id = p2.id JOIN people p3 ON p2.id = p3.id;

-- The same table read twice in one statement, in a subquery of a join condition's side.
-- check: rows
SELECT o.oid FROM orders o WHERE o.amount > (SELECT avg(amount) FROM orders) AND o.pid IN (SELECT id FROM people);

-- check: error AnalysisException nope
SELECT nope FROM people;

-- check: error AnalysisException no_such_table
SELECT * FROM no_such_table;

-- check: error ParseError Syntax error at or near '='\. SQLSTATE: 42601 \(line 2, pos 23\)
SELECT id
FROM people WHERE id = = 1;
