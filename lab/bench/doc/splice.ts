// Writing one section of a document between its markers, leaving every other byte alone.

const open = (id: string) => `<!-- bench:${id} -->`;
const close = (id: string) => `<!-- /bench:${id} -->`;

/** Where a section's body starts and ends; a missing, repeated or misordered marker throws. */
export function locate(doc: string, id: string): { start: number; end: number } {
  const count = (marker: string) => doc.split(marker).length - 1;
  for (const marker of [open(id), close(id)])
    if (count(marker) !== 1)
      throw new Error(
        `docs/benchmarks.md must hold ${marker} exactly once (it holds it ${count(marker)} times)`,
      );
  const start = doc.indexOf(open(id)) + open(id).length;
  const end = doc.indexOf(close(id));
  if (end < start) throw new Error(`docs/benchmarks.md: ${close(id)} comes before ${open(id)}`);
  return { start, end };
}

/** The document with the section's body replaced by `body` (between blank lines). */
export function splice(doc: string, id: string, body: string): string {
  const { start, end } = locate(doc, id);
  return `${doc.slice(0, start)}\n${body.trim()}\n${doc.slice(end)}`;
}

/** The section's body as the document holds it. */
export function sectionOf(doc: string, id: string): string {
  const { start, end } = locate(doc, id);
  return doc.slice(start, end).trim();
}
