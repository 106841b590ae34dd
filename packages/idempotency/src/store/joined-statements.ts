// Statements about one key, joined: a caller joins the next statement for its key, sent as soon as
// the one in flight is back. Never the one in flight: that may have read the row before whatever
// this caller waits for. A thousand requests waiting on one key (Prefer: wait) then take two pool
// connections when it settles, not a thousand.

const settled = () => {};

export class JoinedStatements<T> {
  /** In flight by key, and the one that follows for whoever asked meanwhile. */
  private readonly flights = new Map<string, { running: Promise<T>; next?: Promise<T> }>();

  run(id: string, send: () => Promise<T>): Promise<T> {
    const flight = this.flights.get(id);
    if (!flight) return this.now(id, send);
    flight.next ??= flight.running.then(settled, settled).then(() => this.now(id, send));
    return flight.next;
  }

  private now(id: string, send: () => Promise<T>): Promise<T> {
    const running = send();
    this.flights.set(id, { running });
    const done = () => {
      if (this.flights.get(id)?.running === running) this.flights.delete(id);
    };
    running.then(done, done);
    return running;
  }
}
