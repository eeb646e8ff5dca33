/** The options every command takes (SPEC section 4). */
export interface Globals {
  root?: string;
  json?: boolean;
}
