/**
 * Picks the first server candidate that can work. Uses child_process and fs but not `vscode`,
 * so it is unit-tested with node's test runner.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';

import { CandidateFailure, LaunchContext, ServerCandidate, findExecutable } from './serverCommand';

export function isExecutableFile(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) {
      return false;
    }
    if (process.platform === 'win32') {
      return true;
    }
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function run(command: string, args: string[], timeoutMs: number, cwd?: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, windowsHide: true, cwd }, (error, _stdout, stderr) => {
      if (!error) {
        resolve(undefined);
        return;
      }
      const detail = String(stderr).trim().split(/\r?\n/).pop() ?? '';
      resolve(detail !== '' ? detail : error.message);
    });
  });
}

export interface ProbeResult {
  chosen?: ServerCandidate;
  failures: CandidateFailure[];
}

/**
 * Tries the candidates in order; the first whose executable exists and whose probe succeeds wins.
 * Probes run in `ctx.neutralCwd` (never the workspace folder).
 */
export async function chooseServer(
  candidates: ServerCandidate[],
  ctx: Pick<LaunchContext, 'platform' | 'env' | 'neutralCwd'>,
  timeoutMs = 15000,
): Promise<ProbeResult> {
  const failures: CandidateFailure[] = [];
  for (const candidate of candidates) {
    const resolved = findExecutable(candidate.command, ctx, isExecutableFile);
    if (resolved === undefined) {
      failures.push({ candidate, reason: 'not found' });
      continue;
    }
    if (candidate.probe !== undefined) {
      const probeCommand = candidate.probe.command === candidate.command ? resolved : candidate.probe.command;
      const err = await run(probeCommand, candidate.probe.args, timeoutMs, ctx.neutralCwd);
      if (err !== undefined) {
        failures.push({ candidate, reason: err });
        continue;
      }
    }
    return { chosen: { ...candidate, command: resolved }, failures };
  }
  return { failures };
}
