/**
 * Newline-delimited JSON-RPC over byte streams, under a byte budget per message: the reader for
 * the agent's stdin (with JSON-RPC 2.0 error answers for what is oversize, unparseable or
 * invalid) and the pieces the backing-server transports share (the line reader, the `id` sniffer
 * for a message too large to parse, the budget and its error).
 *
 * @module
 */
export { type LineEvent, LineReader, OVERSIZE_KEPT_BYTES } from "./_line_reader.ts";
export {
  isResponseKeys,
  type RequestId,
  type SniffedMessage,
  sniffMessage,
  sniffRequestId,
} from "./_sniff_id.ts";
export {
  type Classified,
  classifyLine,
  classifyValue,
  type ErrorReply,
  errorReply,
  INVALID_REQUEST,
  PARSE_ERROR,
} from "./_classify.ts";
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  formatBytes,
  isTooLargeData,
  MESSAGE_BUDGET_KEY,
  MessageTooLargeError,
  type TooLargeData,
} from "./message_budget.ts";
export { type ChecksMessages, dispatchCheckedMessages } from "./checked_dispatch.ts";
export { LineStdioServerTransport, type LineStdioServerTransportOptions } from "./stdio_server_transport.ts";
