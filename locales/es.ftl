# Páginas de Latchkey, español.

## Layout
lang-menu = Idioma
noscript = Esta página necesita JavaScript para comunicarse con su llave de acceso.

## Invitation and recovery
link-expired-title = Enlace caducado
link-expired-heading = Este enlace ya no funciona
link-expired-body = No es válido, ya se ha usado o ha caducado. Pida uno nuevo a su administrador.
recover-title = Recuperar su cuenta
recover-lead = Cree una nueva llave de acceso para volver a entrar en su cuenta. Sus otras sesiones iniciadas se cerrarán.
invite-title = Crear su llave de acceso
invite-lead = Inicie sesión sin contraseña: su dispositivo guarda una llave de acceso y la desbloquea con su huella, su cara o el bloqueo de pantalla.
invite-welcome = Le damos la bienvenida, { $name }.
invite-account = Cuenta: { $email }
invite-create-platform = Crear una llave de acceso en este dispositivo
invite-create-roaming = Usar una llave de seguridad en su lugar

## Account
signin-title = Iniciar sesión
signin-lead = Use la llave de acceso de este dispositivo o su llave de seguridad.
signin-button = Iniciar sesión con una llave de acceso
signin-email-label = O escriba su correo electrónico
continue = Continuar
account-title = Sus llaves de acceso
account-signed-in-as = Sesión iniciada como { $email }.
account-advice = Añada una segunda llave de acceso o una llave de seguridad de reserva, para que perder un dispositivo no le deje fuera.
account-add-platform = Añadir una llave de acceso
account-add-roaming = Añadir una llave de seguridad de reserva
account-other-ways = Otras formas de iniciar sesión
account-step-up = Confirmar con su llave de acceso
account-allowed-apps = Aplicaciones que ha autorizado
account-allowed-since = desde el { $date }
account-revoke = Revocar

## Authorization
login-heading = Iniciar sesión en { $app }
login-lead = para continuar en { $app }
login-step-up-bound = { $app } pide una llave de acceso que permanezca en su dispositivo, o una llave de seguridad: aquí no sirve una llave de acceso sincronizada entre dispositivos.
login-step-up-passkey = { $app } pide iniciar sesión con una llave de acceso.
login-email-label = Correo electrónico
login-continue = Continuar con una llave de acceso
login-no-email = Iniciar sesión con una llave de acceso (sin correo)
social-continue = Continuar con { $provider }
select-title = Elegir una cuenta
select-continue-as = Continuar como { $name }
select-another = Usar otra cuenta
consent-title = Permitir el acceso
consent-heading = ¿Permitir a { $app }?
consent-asks = { $app } solicita:
consent-signed-in = Sesión iniciada como { $email }. Puede revocarlo en la página de su cuenta.
consent-allow = Permitir
consent-deny = Denegar
consent-logo = Logotipo de { $app }
scope-openid = Saber quién es usted cuando inicia sesión
scope-profile = Ver su nombre y su foto
scope-email = Ver su dirección de correo electrónico
scope-offline = Mantener el acceso cuando no tenga la sesión iniciada aquí, hasta que lo revoque
scope-credentials = Ver y gestionar sus llaves de acceso
scope-other = Usar una API en su nombre
step-up-title = Se necesita un inicio de sesión más seguro
step-up-bound = { $app } pide una llave de acceso que permanezca en su dispositivo, o una llave de seguridad. Su cuenta solo tiene llaves de acceso sincronizadas entre dispositivos.
step-up-passkey = { $app } pide iniciar sesión con una llave de acceso. Su cuenta no tiene ninguna.
step-up-add = Añada una en la página de su cuenta y vuelva a iniciar sesión en { $app }.
step-up-account-link = Abrir la página de su cuenta
step-up-back = Volver a { $app }
invalid-redirect-title = Dirección de redirección no válida
invalid-redirect-body = La aplicación le ha enviado aquí con una dirección que no tiene registrada, así que no se le devuelve a ella. Avise al administrador de la aplicación.
expired-title = Inicio de sesión caducado
expired-heading = Este inicio de sesión ha caducado
expired-body = Vuelva a la aplicación e inicie sesión de nuevo.

## Social links
link-confirm-title = Vincular una cuenta
link-confirm-heading = ¿Vincular su cuenta de { $provider }?
link-confirm-signed-in = { $provider } le ha identificado como { $name }.
link-confirm-body = Una vez vinculada, esta cuenta de { $provider } inicia sesión aquí como { $email }, sin su llave de acceso. Vincúlela solo si es suya.
link-confirm-button = Vincular la cuenta de { $provider }
cancel = Cancelar

## Sign-out
signout-title = Cerrar sesión
signout-heading = ¿Cerrar sesión?
signout-question = ¿Quiere cerrar la sesión de { $tenant } en este dispositivo?
signout-button = Cerrar sesión
signed-out-title = Sesión cerrada
signed-out-heading = Ha cerrado la sesión
close-window = Puede cerrar esta ventana.

## Device authorization
device-title = Iniciar sesión en su dispositivo
device-enter-code = Escriba el código que muestra su dispositivo.
device-code-label = Código
device-signin-to = Inicie sesión para continuar en:
device-asks = Esta aplicación pide iniciar sesión como:
device-with = con:
device-code-check = Compruebe que este código coincide con el que muestra su dispositivo. Apruebe solo si coincide y si ha sido usted quien ha iniciado este acceso.
device-approve = Aprobar
device-deny = Denegar

## Errors
error-title = Error
error-heading = Algo ha salido mal

# The one-time offer of a passkey after a social sign-in
offer-passkey-title = Añadir una llave de acceso
offer-passkey-heading = Inicie sesión más rápido la próxima vez
offer-passkey-body = Añada una llave de acceso a esta cuenta: la próxima vez iniciará sesión con su huella, su cara o el bloqueo de pantalla, sin pasar por otra cuenta.
offer-passkey-add = Añadir una llave de acceso
offer-passkey-skip = Ahora no

## Messages the page script shows
js-server-error = El servidor no ha podido completar la solicitud.
js-not-allowed = La solicitud de la llave de acceso se canceló o caducó, o esta página no está en la dirección a la que pertenece la llave. Puede volver a intentarlo.
js-invalid-state = Este autenticador ya está registrado en su cuenta.
js-security = La dirección de esta página no puede usar llaves de acceso para esta cuenta.
js-not-supported = Este autenticador no admite el tipo de llave de acceso necesario.
js-authenticator-not-allowed = Su organización solo acepta las llaves de seguridad y los dispositivos que ha aprobado, y este no está entre ellos. Use una llave de seguridad aprobada o pregunte a su administrador cuáles lo están.
js-abort = La solicitud de la llave de acceso se interrumpió. Puede volver a intentarlo.
js-generic = Algo ha salido mal.
js-tap-key = Inserte o toque su llave de seguridad…
js-follow-device = Siga las indicaciones de su dispositivo…
js-passkey-ready = Su llave de acceso está lista. Iniciando sesión…
js-choose-passkey = Elija su llave de acceso…
js-checking-code = Comprobando el código…
js-approved = Aprobado: su dispositivo está iniciando sesión.
js-denied = Denegado: su dispositivo no iniciará sesión.
js-security-key = Llave de seguridad
js-passkey = Llave de acceso
js-added = añadida el
js-rename = Renombrar
js-remove = Quitar
js-only-one = Añada otra llave de acceso o llave de seguridad antes de quitar la única que tiene.
js-removed = Quitada.
js-new-name = Nuevo nombre
js-save = Guardar
js-renamed = Renombrada.
js-key-added = Llave de seguridad añadida.
js-passkey-added = Llave de acceso añadida.
js-unlink = Desvincular
js-link = Vincular
js-link-add-first = Para vincular otra forma de iniciar sesión, añada primero una llave de acceso arriba y vuelva a vincular.
js-link-confirm-first = Para vincular otra forma de iniciar sesión, confirme primero que es usted con su llave de acceso.
js-unlinked = Desvinculada.
js-unsupported-browser = Este navegador no admite llaves de acceso. Use una versión actual de Chrome, Safari, Edge o Firefox.

## E-mails (plain text)
mail-hello = Hola, { $name }:
mail-invite-subject = Tiene una invitación a { $tenant }
mail-invite-lead = Use este enlace para crear su llave de acceso e iniciar sesión sin contraseña.
mail-recover-subject = Recuperar su cuenta de { $tenant }
mail-recover-lead = Use este enlace para registrar una nueva llave de acceso en su cuenta.
mail-once = El enlace funciona una sola vez. Si no esperaba este mensaje, ignórelo.
mail-link-subject = Inicio de sesión con { $provider } añadido a su cuenta de { $tenant }
mail-link-body = Ya puede iniciar sesión en su cuenta de { $tenant } con { $provider } ({ $account }).
mail-link-warning = Si no ha sido usted, inicie sesión con su llave de acceso en { $url }, desvincule { $provider } y avise a su administrador.
