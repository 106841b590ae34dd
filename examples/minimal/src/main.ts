// `DATABASE_URL=postgresql://… npm start`: migrate, then serve on PORT (3000).
import { createApp } from "./app.js";
import { migrate } from "./migrate.js";

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error("Set DATABASE_URL to a PostgreSQL database.");
  process.exit(2);
}
await migrate(databaseUrl);
const app = createApp({ databaseUrl });
const url = await app.listen(Number(process.env.PORT ?? 3000));
console.log(
  `POST ${url}/transfers.create with Authorization: Bearer alice_token and an Idempotency-Key`,
);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void app.close());
