// Node preload (`node --import`) for npm servers that listen on every interface without a host
// option (server-everything's streamable HTTP mode calls `app.listen(PORT)`): every listen() that
// names no host is bound to 127.0.0.1 instead, and the bound address is printed on stderr as
// `LOOPBACK_LISTENING <address> <port>` so a test can use port 0.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  } else if (first !== null && typeof first === "object" && first.path === undefined) {
    args[0] = { ...first, host: "127.0.0.1" };
  }
  this.once("listening", () => {
    const address = this.address();
    console.error(`LOOPBACK_LISTENING ${address.address} ${address.port}`);
  });
  return listen.apply(this, args);
};
