-- hand_issues: every issue row the warehouse stored for one hand ($hand_id), in the order of the hand (issues
-- of no event last), for the audit's dispute pack. Check: the hand's rows of issues, nothing else.
SELECT *
FROM issues
WHERE hand_id = $hand_id
ORDER BY event NULLS LAST, code, seat NULLS LAST, message
