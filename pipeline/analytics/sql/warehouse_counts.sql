-- warehouse_counts: stored hands, valid hands, replayed hands, and rejects.
SELECT
    (SELECT count(*) FROM hands) AS hands,
    (SELECT count(*) FROM hands WHERE valid) AS valid_hands,
    (SELECT count(*) FROM hands WHERE replayed) AS replayed_hands,
    (SELECT count(*) FROM rejects) AS rejects
