# Latchkey 页面，简体中文。

## Layout
lang-menu = 语言
noscript = 此页面需要 JavaScript 才能与您的通行密钥通信。

## Invitation and recovery
link-expired-title = 链接已过期
link-expired-heading = 此链接已失效
link-expired-body = 链接无效、已被使用或已过期。请向管理员索取新链接。
recover-title = 恢复您的账户
recover-lead = 创建新的通行密钥以重新进入您的账户。您其他已登录的会话将被结束。
invite-title = 创建通行密钥
invite-lead = 无需密码即可登录：您的设备保存通行密钥，并通过指纹、面容或屏幕锁解锁。
invite-welcome = 欢迎，{ $name }。
invite-account = 账户：{ $email }
invite-create-platform = 在此设备上创建通行密钥
invite-create-roaming = 改用安全密钥

## Account
signin-title = 登录
signin-lead = 使用此设备上的通行密钥或您的安全密钥。
signin-button = 使用通行密钥登录
signin-email-label = 或输入您的电子邮件地址
continue = 继续
account-title = 您的通行密钥
account-signed-in-as = 已以 { $email } 身份登录。
account-advice = 请再添加一个通行密钥或一把安全密钥作为备用，这样丢失一台设备也不会被锁在账户之外。
account-add-platform = 添加通行密钥
account-add-roaming = 添加备用安全密钥
account-other-ways = 其他登录方式
account-step-up = 用通行密钥确认
account-allowed-apps = 您授权的应用
account-allowed-since = 自 { $date } 起
account-revoke = 撤销

## Authorization
login-heading = 登录 { $app }
login-lead = 以继续访问 { $app }
login-step-up-bound = { $app } 要求使用仅保存在设备上的通行密钥或安全密钥：在设备间同步的通行密钥在此不可用。
login-step-up-passkey = { $app } 要求使用通行密钥登录。
login-email-label = 电子邮件地址
login-continue = 使用通行密钥继续
login-no-email = 使用通行密钥登录（无需电子邮件）
social-continue = 使用 { $provider } 继续
select-title = 选择账户
select-continue-as = 以 { $name } 身份继续
select-another = 使用其他账户
consent-title = 允许访问
consent-heading = 允许 { $app } 吗？
consent-asks = { $app } 请求：
consent-signed-in = 已以 { $email } 身份登录。您可以在账户页面撤销此授权。
consent-allow = 允许
consent-deny = 拒绝
consent-logo = { $app } 的标志
scope-openid = 在您登录时知道您是谁
scope-profile = 查看您的姓名和头像
scope-email = 查看您的电子邮件地址
scope-offline = 在您未在此登录时保持访问，直到您撤销
scope-credentials = 查看和管理您的通行密钥
scope-other = 代表您使用 API
step-up-title = 需要更强的登录方式
step-up-bound = { $app } 要求使用仅保存在设备上的通行密钥或安全密钥。您的账户只有在设备间同步的通行密钥。
step-up-passkey = { $app } 要求使用通行密钥登录。您的账户没有通行密钥。
step-up-add = 请在账户页面添加一个，然后重新登录 { $app }。
step-up-account-link = 打开账户页面
step-up-back = 返回 { $app }
invalid-redirect-title = 重定向地址无效
invalid-redirect-body = 应用使用未注册的地址将您带到这里，因此不会将您送回。请告知该应用的管理员。
expired-title = 登录已过期
expired-heading = 此次登录已过期
expired-body = 请返回应用并重新登录。

## Social links
link-confirm-title = 关联账户
link-confirm-heading = 关联您的 { $provider } 账户吗？
link-confirm-signed-in = { $provider } 已将您识别为 { $name }。
link-confirm-body = 关联后，此 { $provider } 账户无需通行密钥即可在此以 { $email } 身份登录。仅当它是您本人的账户时才关联。
link-confirm-button = 关联 { $provider } 账户
cancel = 取消

## Sign-out
signout-title = 退出登录
signout-heading = 要退出登录吗？
signout-question = 要在此设备上退出 { $tenant } 吗？
signout-button = 退出登录
signed-out-title = 已退出
signed-out-heading = 您已退出登录
close-window = 您可以关闭此窗口。

## Device authorization
device-title = 在您的设备上登录
device-enter-code = 请输入设备上显示的代码。
device-code-label = 代码
device-signin-to = 登录以继续访问：
device-asks = 此应用请求以下列身份登录：
device-with = 所需权限：
device-code-check = 请确认此代码与设备上显示的代码一致。仅当一致且此次登录由您发起时才批准。
device-approve = 批准
device-deny = 拒绝

## Errors
error-title = 错误
error-heading = 出现问题

# The one-time offer of a passkey after a social sign-in
offer-passkey-title = 添加通行密钥
offer-passkey-heading = 下次更快登录
offer-passkey-body = 为此账户添加通行密钥：下次即可使用指纹、面容或屏幕锁登录，无需通过其他账户。
offer-passkey-add = 添加通行密钥
offer-passkey-skip = 以后再说

## Messages the page script shows
js-server-error = 服务器无法完成请求。
js-not-allowed = 通行密钥请求已取消或超时，或者此页面不在通行密钥所属的地址上。您可以重试。
js-invalid-state = 此验证器已注册到您的账户。
js-security = 此页面的地址不允许使用此账户的通行密钥。
js-not-supported = 此验证器不支持所需的通行密钥类型。
js-authenticator-not-allowed = 您的组织只接受其批准的安全密钥和设备，此设备不在其中。请使用已批准的安全密钥，或询问管理员哪些已获批准。
js-abort = 通行密钥请求被中断。您可以重试。
js-generic = 出现问题。
js-tap-key = 请插入或轻触您的安全密钥…
js-follow-device = 请按照设备上的提示操作…
js-passkey-ready = 您的通行密钥已就绪，正在登录…
js-choose-passkey = 请选择您的通行密钥…
js-checking-code = 正在检查代码…
js-approved = 已批准：您的设备正在登录。
js-denied = 已拒绝：您的设备不会登录。
js-security-key = 安全密钥
js-passkey = 通行密钥
js-added = 添加于
js-rename = 重命名
js-remove = 移除
js-only-one = 移除唯一的通行密钥之前，请先添加另一个通行密钥或安全密钥。
js-removed = 已移除。
js-new-name = 新名称
js-save = 保存
js-renamed = 已重命名。
js-key-added = 已添加安全密钥。
js-passkey-added = 已添加通行密钥。
js-unlink = 取消关联
js-link = 关联
js-link-add-first = 要关联其他登录方式，请先在上方添加通行密钥，然后再次关联。
js-link-confirm-first = 要关联其他登录方式，请先用通行密钥确认是您本人。
js-unlinked = 已取消关联。
js-unsupported-browser = 此浏览器不支持通行密钥。请使用最新版本的 Chrome、Safari、Edge 或 Firefox。

## E-mails (plain text)
mail-hello = { $name }，您好：
mail-invite-subject = 您受邀加入 { $tenant }
mail-invite-lead = 请使用此链接创建通行密钥，无需密码即可登录。
mail-recover-subject = 恢复您的 { $tenant } 账户
mail-recover-lead = 请使用此链接为您的账户注册新的通行密钥。
mail-once = 此链接仅可使用一次。如果您没有预期收到此邮件，请忽略。
mail-link-subject = 您的 { $tenant } 账户已添加 { $provider } 登录
mail-link-body = 您现在可以使用 { $provider }（{ $account }）登录您的 { $tenant } 账户。
mail-link-warning = 如果这不是您本人操作，请在 { $url } 使用通行密钥登录，取消关联 { $provider }，然后告知管理员。
