/** The version unwind reports (`unwind --version`, the MCP server's serverInfo). */
export const VERSION = "0.1.0";
