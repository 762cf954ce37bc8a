#!/usr/bin/env node
// `fleet-apiserver [serve] [--config fleet.yaml]` starts the fleet (the embedded demo without a config);
// `fleet-apiserver kubeconfig --server <url> …` writes kubeconfig contexts for a running fleet.
// From a checkout the TypeScript sources run through tsx (a dev dependency), as `npm start` does.
import { register } from 'tsx/esm/api';

register();
const [cmd, ...rest] = process.argv.slice(2);
if (cmd === 'kubeconfig') {
  const { kubeconfigCommand, UsageError, KUBECONFIG_USAGE } = await import('../deploy/cli/kubeconfig.ts');
  try {
    process.exit(await kubeconfigCommand(rest));
  } catch (e) {
    if (e instanceof UsageError || e?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      console.error(`fleet-apiserver kubeconfig: ${e.message}\n\n${KUBECONFIG_USAGE}`);
      process.exit(2);
    }
    console.error(`fleet-apiserver kubeconfig: ${e?.message ?? e}`);
    process.exit(1);
  }
} else {
  if (cmd === 'serve') process.argv.splice(2, 1);
  await import('../deploy/node/main.ts');
}
