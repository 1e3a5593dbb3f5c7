// Preload for server-everything: listen on 127.0.0.1 (PORT=<n>, 0 for any)
// and print "LISTENING 127.0.0.1:<port>"; log each request as "REQ <method>".
import net from "node:net";
import http from "node:http";
const orig = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    const cb = args.find(a => typeof a === "function");
    this.once("listening", () => process.stderr.write(`LISTENING 127.0.0.1:${this.address().port}\n`));
    return orig.call(this, { port: Number(args[0]), host: "127.0.0.1" }, cb);
  }
  return orig.apply(this, args);
};
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function (ev, req, ...rest) {
  if (ev === "request") process.stderr.write(`REQ ${req.method}\n`);
  return emit.call(this, ev, req, ...rest);
};
