#!/usr/bin/env node
// The `rootbound` command of the npm package: finds the native binary that
// npm installed for this machine (the optional dependency
// rootbound-<platform>-<arch>) and runs it with the same arguments, standard
// input and output, so an MCP client talks to the binary itself. Nothing is
// downloaded here or at install time.
"use strict";

const { spawn } = require("child_process");
const pkg = require("../package.json");

function fail(message) {
  process.stderr.write(`rootbound: ${message}\n`);
  process.exit(1);
}

function binaryPath() {
  if (process.env.ROOTBOUND_BINARY) {
    return process.env.ROOTBOUND_BINARY;
  }
  const platformPackage = `rootbound-${process.platform}-${process.arch}`;
  if (!Object.prototype.hasOwnProperty.call(pkg.optionalDependencies || {}, platformPackage)) {
    fail(
      `no prebuilt binary for ${process.platform} ${process.arch}. ` +
        "Build it from source with `cargo install rootbound`, then run `rootbound` directly " +
        "(or point ROOTBOUND_BINARY at it)."
    );
  }
  const exe = process.platform === "win32" ? "rootbound.exe" : "rootbound";
  try {
    return require.resolve(`${platformPackage}/bin/${exe}`);
  } catch (_) {
    fail(
      `the package ${platformPackage} is not installed. npm installs it as an optional ` +
        "dependency of rootbound; it is missing when optional dependencies were left out " +
        "(--omit=optional, --no-optional) or when node_modules was copied from another " +
        `machine. Reinstall rootbound, or run \`npm install ${platformPackage}@${pkg.version}\`.`
    );
  }
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: "inherit" });

// Signals sent to this launcher go to the server too, so a client that stops
// the launcher stops the server.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"];
for (const signal of forwarded) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
  });
}

child.on("error", (error) => fail(`cannot start ${child.spawnfile}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // End the same way, so the caller sees the signal.
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
