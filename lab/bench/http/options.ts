// The HTTP bench's plan. Defaults keep the whole run within about six minutes on two cores;
// `--quick` is for developing the bench itself (figures too short to quote).
export interface Plan {
  quick: boolean;
  /** Rounds over every cell: each cell is measured `slices` times, interleaved with all others. */
  slices: number;
  sliceSeconds: number;
  connections: number[];
  /** The instances table: 1..maxInstances instances at this many connections. */
  scaleConnections: number;
  maxInstances: number;
  drainLimitSeconds: number;
  profileSeconds: number;
  profile: boolean;
  /** `--order-cost`: only the paid order's cost (CPU per process, statements), nothing else. */
  orderCostOnly: boolean;
  /** `--route-cost`: only what each route costs the server (and the route goals), nothing else. */
  routeCostOnly: boolean;
  /**
   * `--orders N`: paid orders per side in the order cost (default: two warm-up rates' worth); with
   * `--order-cost` and the profile on, the app server is profiled over its orders.
   */
  orders?: number;
  /**
   * `--baseline DIR`: another checkout (with its production build) run beside this one as the
   * `baseline` path, and its routes' costs measured in the same rounds as this build's.
   */
  baseline?: string;
  /**
   * Payment loops in a worker process of their own (ONCE_PAYMENT_JOBS=0 + npm run worker), as
   * `npm start` runs them; `--payments-in-process` puts them back on the server's thread.
   */
  paymentsProcess: boolean;
  /** First loopback port for the `next start` instances (the project's helpers use 3300–3399). */
  basePort: number;
  output: string;
}

const USAGE = `usage: npm run bench:http -- [--quick] [--no-profile] [--order-cost] [--route-cost] [--orders N] [--baseline DIR] [--payments-in-process] [--slices N] [--seconds S] [--port P] [--out FILE]`;

/** The defaults, with the flags (the options that take no value) applied. */
function defaultPlan(argv: readonly string[]): Plan {
  const quick = argv.includes("--quick");
  return {
    quick,
    slices: quick ? 2 : 3,
    sliceSeconds: quick ? 1 : 4,
    connections: [1, 16, 64, 256],
    scaleConnections: 64,
    maxInstances: 3,
    drainLimitSeconds: quick ? 10 : 45,
    profileSeconds: quick ? 3 : 10,
    profile: !argv.includes("--no-profile"),
    orderCostOnly: argv.includes("--order-cost"),
    routeCostOnly: argv.includes("--route-cost"),
    paymentsProcess: !argv.includes("--payments-in-process"),
    basePort: 3300,
    output: "lab/bench/results/http-latest.md",
  };
}

/** The defaults, then the options that take a value; an unknown option fails with the usage. */
export function parsePlan(argv: readonly string[]): Plan {
  const plan = defaultPlan(argv);
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    const number = () => {
      const n = Number(value);
      if (!Number.isFinite(n) || n <= 0)
        throw new Error(`${argv[i]} needs a positive number\n${USAGE}`);
      i++;
      return n;
    };
    switch (argv[i]) {
      case "--quick":
      case "--no-profile":
      case "--order-cost":
      case "--route-cost":
      case "--payments-in-process":
        break;
      case "--slices":
        plan.slices = Math.round(number());
        break;
      case "--seconds":
        plan.sliceSeconds = number();
        break;
      case "--orders":
        plan.orders = Math.round(number());
        break;
      case "--port":
        plan.basePort = Math.round(number());
        break;
      case "--baseline":
        if (!value) throw new Error(`--baseline needs a directory\n${USAGE}`);
        plan.baseline = value;
        i++;
        break;
      case "--out":
        plan.output = value ?? plan.output;
        i++;
        break;
      default:
        throw new Error(`unknown option ${argv[i]}\n${USAGE}`);
    }
  }
  return plan;
}
