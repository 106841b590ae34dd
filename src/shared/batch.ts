// How many calls one tRPC request may batch. The shop's own client batches the queries one page
// asks for at once: the dashboard's panels are the most, about ten, and the app has 17 query
// procedures in all. 20 leaves room for that and nothing more: one request cannot make the server
// run a thousand queries (a 15 KB GET of 1 150 × catalog.list did, and returned 2 MB). The
// browser's batch link is given the same number (src/trpc/react.tsx), so the app's own pages split
// a longer batch instead of being refused.
export const MAX_BATCH_SIZE = 20;
