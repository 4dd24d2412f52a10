-- local_time: the macro every date and month of the analytics goes through (pipeline/analytics/scope.py):
-- local_time(played_at, utc_offset) is the local wall time of a hand (a TIMESTAMP without zone). With the
-- connection's variable xuezhan_tz NULL (the default) it is the record's own: played_at (UTC) plus the offset
-- the record wrote (hands.utc_offset, minutes; a record without one, or a warehouse from before the column,
-- reads as UTC); with xuezhan_tz an IANA zone (--tz), the wall time in that zone.
-- Never strftime a TIMESTAMPTZ directly: DuckDB would use the session's TimeZone (the machine's).
-- Check: local_time(TIMESTAMPTZ '2026-10-31 16:30:00+00', 480) = TIMESTAMP '2026-11-01 00:30:00'.
CREATE OR REPLACE TEMP MACRO local_time(moment, offset_minutes) AS
    CASE
        WHEN getvariable('xuezhan_tz') IS NULL
            THEN timezone('UTC', moment) + to_minutes(coalesce(offset_minutes, 0)::INTEGER)
        ELSE timezone(getvariable('xuezhan_tz'), moment)
    END
