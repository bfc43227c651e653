import type { FastifyPluginAsync } from 'fastify';
import authCancel from '../routes/auth.cancel.js';
import authLogin from '../routes/auth.login.js';
import authLoginCallback from '../routes/auth.login_callback.js';
import authLogout from '../routes/auth.logout.js';
import authStatus from '../routes/auth.status.js';
import capabilities from '../routes/capabilities.js';
import catalogList from '../routes/catalog.list.js';
import catalogRefresh from '../routes/catalog.refresh.js';
import executorConfirm from '../routes/executor.confirm.js';
import executorCreate from '../routes/executor.create.js';
import executorRelease from '../routes/executor.release.js';
import executorResume from '../routes/executor.resume.js';
import executorRotate from '../routes/executor.rotate.js';
import executorRotateConfirm from '../routes/executor.rotate_confirm.js';
import initialize from '../routes/initialize.js';
import operationLookup from '../routes/operation.lookup.js';
import sessionClaim from '../routes/session.claim.js';
import sessionClose from '../routes/session.close.js';
import sessionCreate from '../routes/session.create.js';
import sessionList from '../routes/session.list.js';
import sessionRelease from '../routes/session.release.js';
import sessionReplay from '../routes/session.replay.js';
import sessionResourcesClear from '../routes/session.resources.clear.js';
import sessionResourcesList from '../routes/session.resources.list.js';
import sessionResourcesRegister from '../routes/session.resources.register.js';
import sessionResourcesUnregister from '../routes/session.resources.unregister.js';
import settingsGet from '../routes/settings.get.js';
import settingsUpdate from '../routes/settings.update.js';
import status from '../routes/status.js';
import turnApplicationEvidence from '../routes/turn.application_evidence.js';
import turnApplicationToolResult from '../routes/turn.application_tool_result.js';
import turnStart from '../routes/turn.start.js';
import turnStop from '../routes/turn.stop.js';

/** The route of every wire method, in the order the daemon registers them: one file of routes/ each. */
export const WIRE_ROUTES: readonly FastifyPluginAsync[] = [
  initialize,
  capabilities,
  status,
  sessionCreate,
  sessionClaim,
  sessionRelease,
  sessionClose,
  sessionList,
  sessionReplay,
  operationLookup,
  executorCreate,
  executorConfirm,
  executorResume,
  executorRotate,
  executorRotateConfirm,
  executorRelease,
  sessionResourcesList,
  sessionResourcesRegister,
  sessionResourcesUnregister,
  sessionResourcesClear,
  turnStart,
  turnStop,
  turnApplicationToolResult,
  turnApplicationEvidence,
  authStatus,
  authLogin,
  authLoginCallback,
  authCancel,
  authLogout,
  catalogList,
  catalogRefresh,
  settingsGet,
  settingsUpdate,
];
