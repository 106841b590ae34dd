// One connection for the length of a callback, closed whatever the callback did. No Vitest here:
// the Playwright specs use it too.
import pg from "pg";

export async function withClient<T>(
  url: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
