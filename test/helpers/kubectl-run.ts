/** kubectlRun runs the real kubectl against a server's admin kubeconfig, with its own discovery cache. */
import { spawn } from 'node:child_process';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function kubectlRun(kubeconfig: string, cacheDir: string, args: string[], input?: string): Promise<KubectlResult> {
  return new Promise((done) => {
    const p = spawn('kubectl', args, { env: { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: cacheDir } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    p.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    p.stdin.end(input ?? '');
    p.on('close', (code) => done({ code: code ?? -1, stdout, stderr }));
  });
}
