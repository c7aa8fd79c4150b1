/** A fixed-size buffer of the most recent lines; the oldest fall out first. */
export class LineRing {
  private readonly lines: string[] = [];
  /** When the last line arrived (epoch ms), for the API's log list; null before any. */
  modifiedAt: number | null = null;

  constructor(private readonly capacity: number) {}

  push(line: string, at: number = Date.now()): void {
    this.modifiedAt = at;
    this.lines.push(line);
    if (this.lines.length > this.capacity) this.lines.splice(0, this.lines.length - this.capacity);
  }

  /** Oldest first; a copy. */
  toArray(): string[] {
    return [...this.lines];
  }
}
