// `npm run soak -- --help`: every knob of config.ts, one line each.
export const HELP = `npm run soak -- [options]      (defaults: both profiles, 3 minutes under fire each)
  --short                 what npm test runs: the PgBouncer profile, 25 s under fire
  --profile direct|pgbouncer|both|patroni|patroni-async
                          patroni: etcd + 3 Patroni nodes (synchronous_mode) behind HAProxy, under a
                          switchover, a postmaster kill -9, a node lost and back, a replication stall;
                          patroni-async: the demonstration (asynchronous, a stall, the primary lost)
  --switchoverAt F --postmasterKillAt F --nodeLossAt F --stallAt F --nodeAwayMs N --stallMs N
  --patroniTtlSeconds N --basePort N (patroni: ports from N on; default any free ports)
  --durationMs N --settleMs N --drainMs N --maxRequests N --clients N --instances N
  --dropRate R --slowRate R --slowMs N --resendRate R
  --killEveryMs N --pgRestartAt F --pgStopAt F --pgStopMs N
  --providerFailureRate R --providerTimeoutRate R --operatorEveryMs N
  --leaseMs N --haproxyServerTimeoutMs N --seed N --out DIR
  --noBuild               use the existing production build   --keep   keep the logs of a passing run
  --sessionsThroughPgbouncer   no direct connection for session work (shows the reaper's lock leak)
Every run writes DIR/<profile>.md (the table) and DIR/<profile>.svg (the chart); exit code 1 on any violation.`;
