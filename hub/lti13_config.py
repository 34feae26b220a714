"""LTI 1.3 login from Canvas or Moodle (jupyterhub-ltiauthenticator 1.6).

Used instead of PAM when the hub is started with ``DP_HUB_AUTH=lti13``; executed inside
hub/jupyterhub_config.py (``c``, ``instructors`` and ``students`` come from there).
Register the hub in the LMS as an LTI 1.3 tool first (Canvas: Admin → Developer Keys →
+ LTI Key, "Paste JSON" from https://HUB/hub/lti13/config; Moodle: Site administration →
Plugins → External tool → Manage tools → "Configure a tool manually"), then copy the
platform's values into the DP_HUB_LTI_* variables below. Not exercised by the tests
(no LMS here); the keys are those of ltiauthenticator.lti13.auth.LTI13Authenticator.

The spawner still runs each person's server as the OS account of the same name, so the
username claim must give the roster ids: send them as a custom parameter (Canvas:
``uname=$Canvas.user.loginId``; Moodle: ``uname=$User.username``) and keep
``username_key = "custom_uname"``. Instructors are still the roster's (the Formgrader
group is static); LTI roles are not mapped to groups.
"""
import os

c = get_config()  # noqa: F821  (set by jupyterhub_config.py, which runs this file)

c.JupyterHub.authenticator_class = "ltiauthenticator.lti13.auth.LTI13Authenticator"
# the platform (LMS): Canvas cloud values as an example
c.LTI13Authenticator.issuer = os.environ.get("DP_HUB_LTI_ISSUER", "https://canvas.instructure.com")
c.LTI13Authenticator.authorize_url = os.environ.get(
    "DP_HUB_LTI_AUTHORIZE_URL", "https://sso.canvaslms.com/api/lti/authorize_redirect")
c.LTI13Authenticator.jwks_endpoint = os.environ.get(
    "DP_HUB_LTI_JWKS_URL", "https://sso.canvaslms.com/api/lti/security/jwks")
c.LTI13Authenticator.client_id = {os.environ.get("DP_HUB_LTI_CLIENT_ID", "REPLACE-WITH-CLIENT-ID")}
c.LTI13Authenticator.username_key = "custom_uname"
c.LTI13Authenticator.uri_scheme = "https"
c.LTI13Authenticator.tool_name = "差分隐私 · Differential privacy (dp-course)"
c.Authenticator.allowed_users = set(instructors + students)  # noqa: F821
