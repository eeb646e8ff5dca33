/**
 * Where a batch of items from `start` ends: at most `most.count` items and
 * `most.bytes` of their sizes, and always at least one (an item larger than
 * the byte limit goes alone). The apply's temp files and the checkout of
 * converted blobs are cut this way.
 */
export function batchEnd(length: number, start: number, sizeOf: (i: number) => number, most: { count: number; bytes: number }): number {
  let end = start + 1;
  let bytes = sizeOf(start);
  while (end < length && end - start < most.count) {
    bytes += sizeOf(end);
    if (bytes > most.bytes) break;
    end++;
  }
  return end;
}
