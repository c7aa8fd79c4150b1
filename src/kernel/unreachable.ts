/**
 * The default branch of an exhaustive switch: the compiler proves it is never reached
 * (a new union member that a switch forgets is a type error), and at run time a value
 * that slipped past the types is a bug, reported with what it was.
 */
export function unreachable(x: never, what = 'value'): never {
  throw new Error(`unknown ${what}: ${JSON.stringify(x)}`);
}
