// A request body that is made as it is read, counting what was pulled: the proof that a limiter
// stopped reading. Used by *.test.ts only.
export function countingStream(totalBytes: number, chunkBytes: number) {
  let pulled = 0;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (pulled >= totalBytes) return controller.close();
        const size = Math.min(chunkBytes, totalBytes - pulled);
        pulled += size;
        controller.enqueue(new Uint8Array(size).fill(0x20));
      },
      cancel() {
        cancelled = true;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}
