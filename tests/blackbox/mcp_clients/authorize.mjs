// Preloaded (`node --import`) into the MCP conformance suite, whose server scenarios connect
// without credentials: every HTTP request this process makes (fetch and undici alike go
// through undici's global dispatcher) carries QUIRE_MCP_AUTHORIZATION as its Authorization.
import { createRequire } from "node:module";

const require = createRequire(process.env.QUIRE_UNDICI_FROM);
const { Agent, setGlobalDispatcher } = require("undici");
const authorization = process.env.QUIRE_MCP_AUTHORIZATION;

function withAuthorization(headers) {
  if (headers == null) return { authorization };
  if (Array.isArray(headers)) {
    const kept = [];
    for (let i = 0; i < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() !== "authorization") kept.push(headers[i], headers[i + 1]);
    }
    return [...kept, "authorization", authorization];
  }
  const kept = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== "authorization") kept[name] = value;
  }
  return { ...kept, authorization };
}

setGlobalDispatcher(
  new Agent().compose((dispatch) => (options, handler) =>
    dispatch({ ...options, headers: withAuthorization(options.headers) }, handler)),
);
