// The plugin's only way to the network: Obsidian's `requestUrl`, to the configured daemon on
// this machine, and nowhere else.

import { requestUrl, type RequestUrlParam } from "obsidian";
import {
  DaemonClient,
  DaemonError,
  isLoopbackUrl,
  parseJsonBody,
  type HttpRequest,
  type HttpResponse,
  type RequestFn,
} from "./client";
import type { VaultmemSettings } from "./settings";

/** `requestUrl` without throwing on 4xx/5xx: the client maps the daemon's error body. */
export async function obsidianRequest(request: HttpRequest): Promise<HttpResponse> {
  const params: RequestUrlParam = {
    url: request.url,
    method: request.method,
    headers: request.headers,
    throw: false,
  };
  if (request.body !== undefined) {
    params.body = request.body;
    params.contentType = "application/json";
  }
  const response = await requestUrl(params);
  return { status: response.status, json: parseJsonBody(response.text) };
}

/** Refuses any URL that is not a loopback `http://` address before anything is sent. */
export function loopbackOnly(request: RequestFn): RequestFn {
  return (opts) => {
    if (!isLoopbackUrl(opts.url)) {
      return Promise.reject(new DaemonError("config",
        "the vaultmem daemon address must be an http:// address on this machine "
        + "(127.0.0.1, localhost or [::1]); fix it in the vaultmem plugin settings", 0));
    }
    return request(opts);
  };
}

export function createDaemonClient(
  settings: Pick<VaultmemSettings, "daemonUrl" | "token">,
  request: RequestFn = obsidianRequest,
): DaemonClient {
  return new DaemonClient({
    baseUrl: settings.daemonUrl,
    token: settings.token,
    request: loopbackOnly(request),
  });
}
