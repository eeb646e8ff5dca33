/** The version unwind reports (`unwind --version`, the MCP server's serverInfo). */
export const VERSION = "0.1.0";

/** The on-disk format of the store, written to its VERSION file: a reader of another format knows it before reading a record. */
export const STORE_FORMAT = 1;
