// A small MCP client for the parity harness: starts the real rootbound
// binary over stdio and calls its tools with newline-delimited JSON-RPC.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export class Rootbound {
  /**
   * @param {string} bin path of the rootbound binary
   * @param {string[]} roots --root arguments, primary first
   * @param {string} dialect value of --dialect
   */
  constructor(bin, roots, dialect) {
    const args = roots.flatMap((r) => ['--root', r]);
    args.push('--dialect', dialect, '--bash-mode', 'off');
    this.stderr = '';
    this.child = spawn(bin, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, RUST_LOG: 'warn' },
    });
    this.child.stderr.on('data', (d) => {
      this.stderr += d.toString();
    });
    this.pending = new Map();
    this.nextId = 1;
    this.exited = new Promise((resolve) => this.child.on('exit', resolve));
    this.child.on('exit', (code, signal) => {
      for (const { reject } of this.pending.values()) {
        reject(new Error(`rootbound exited (${code ?? signal}): ${this.stderr}`));
      }
      this.pending.clear();
    });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      const waiter = this.pending.get(msg.id);
      if (!waiter) return;
      this.pending.delete(msg.id);
      if (msg.error) waiter.reject(new Error(`JSON-RPC error ${msg.error.code}: ${msg.error.message}`));
      else waiter.resolve(msg.result);
    });
  }

  request(method, params) {
    const id = this.nextId++;
    const line = JSON.stringify({ jsonrpc: '2.0', id, method, params });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`rootbound did not answer ${method} within 60 s`));
      }, 60_000);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.child.stdin.write(line + '\n');
    });
  }

  notify(method, params) {
    this.child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
  }

  async start() {
    await this.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'gemini-parity', version: '1' },
    });
    this.notify('notifications/initialized', {});
    return this;
  }

  async tools() {
    const result = await this.request('tools/list', {});
    return result.tools;
  }

  /** Calls a tool; returns the raw CallToolResult. */
  call(name, args) {
    return this.request('tools/call', { name, arguments: args });
  }

  async stop() {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}
