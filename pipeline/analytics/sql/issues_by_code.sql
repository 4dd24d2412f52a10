-- issues_by_code: validator findings by code over every stored hand, with the hands they touch.
-- Check: hands <= the number of stored hands.
WITH
source AS (
    SELECT code, severity, hand_id FROM issues
)

SELECT code, any_value(severity) AS severity, count(*) AS issues, count(DISTINCT hand_id) AS hands
FROM source
GROUP BY code
ORDER BY issues DESC, code
