/** The interpreter selected in the Python extension (ms-python.python), when it is installed. */
import * as vscode from 'vscode';

const PYTHON_EXTENSION_ID = 'ms-python.python';

// The small part of the Python extension's API used here (see @vscode/python-extension).
interface PythonEnvironmentsApi {
  getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
  resolveEnvironment(env: { id: string; path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  environments?: PythonEnvironmentsApi;
  settings?: { getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } };
}

async function api(): Promise<PythonExtensionApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (ext === undefined) {
    return undefined;
  }
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch {
    return undefined;
  }
}

/** The selected interpreter's executable, or `undefined` when there is no Python extension or no selection. */
export async function selectedInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  const python = await api();
  if (python === undefined) {
    return undefined;
  }
  try {
    const envs = python.environments;
    if (envs !== undefined) {
      const resolved = await envs.resolveEnvironment(envs.getActiveEnvironmentPath(resource));
      const exe = resolved?.executable.uri?.fsPath;
      if (exe) {
        return exe;
      }
    }
    const cmd = python.settings?.getExecutionDetails?.(resource).execCommand;
    // A single-element command is an interpreter path; anything longer (conda run ...) is not usable as one.
    if (cmd !== undefined && cmd.length === 1 && cmd[0]) {
      return cmd[0];
    }
  } catch {
    // Fall through to the default interpreter.
  }
  return undefined;
}

/** Calls `listener` when the user selects another interpreter in the Python extension. */
export async function onDidChangeInterpreter(listener: () => void): Promise<vscode.Disposable | undefined> {
  const python = await api();
  const event = python?.environments?.onDidChangeActiveEnvironmentPath;
  return event ? event(() => listener()) : undefined;
}
