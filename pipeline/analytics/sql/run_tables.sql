-- run_tables: each table's hands and hands with a scoring or settlement error (as run_health.sql counts them),
-- per ingest run: the rows each table's rate is compared across runs with. A hand without a table is counted
-- under table_id null.
-- Check: per run, the sum of hands over tables = run_health.stored.
WITH
settle AS (
    SELECT DISTINCT hand_id
    FROM issues
    WHERE severity = 'error' AND (code LIKE 'SCORE\_%' ESCAPE '\' OR code LIKE 'SETTLE\_%' ESCAPE '\')
)

SELECT h.ingest_run AS run_id, h.table_id, count(*) AS hands, count(s.hand_id) AS settle_errors
FROM hands AS h
LEFT JOIN settle AS s ON s.hand_id = h.hand_id
GROUP BY h.ingest_run, h.table_id
ORDER BY h.ingest_run, h.table_id
