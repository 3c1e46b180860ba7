# Latchkey のページ、日本語。

## Layout
lang-menu = 言語
noscript = このページがパスキーとやり取りするには JavaScript が必要です。

## Invitation and recovery
link-expired-title = リンクの有効期限切れ
link-expired-heading = このリンクは使用できません
link-expired-body = 無効であるか、使用済みか、有効期限が切れています。管理者に新しいリンクを依頼してください。
recover-title = アカウントの復旧
recover-lead = 新しいパスキーを作成してアカウントに戻ります。ほかのサインイン中のセッションは終了します。
invite-title = パスキーの作成
invite-lead = パスワードなしでサインインできます。パスキーはデバイスに保存され、指紋、顔認証、または画面ロックで解除されます。
invite-welcome = { $name } さん、ようこそ。
invite-account = アカウント: { $email }
invite-create-platform = このデバイスでパスキーを作成
invite-create-roaming = 代わりにセキュリティキーを使用

## Account
signin-title = サインイン
signin-lead = このデバイスのパスキーまたはセキュリティキーを使用してください。
signin-button = パスキーでサインイン
signin-email-label = またはメールアドレスを入力
continue = 続行
account-title = パスキー
account-signed-in-as = { $email } としてサインインしています。
account-advice = 予備として 2 つ目のパスキーまたはセキュリティキーを追加してください。デバイスを 1 台なくしてもサインインできなくなることはありません。
account-add-platform = パスキーを追加
account-add-roaming = 予備のセキュリティキーを追加
account-other-ways = その他のサインイン方法
account-step-up = パスキーで確認
account-allowed-apps = 許可したアプリケーション
account-allowed-since = { $date } から
account-revoke = 取り消す

## Authorization
login-heading = { $app } にサインイン
login-lead = { $app } に進むには
login-step-up-bound = { $app } では、デバイスから出ないパスキーまたはセキュリティキーが必要です。デバイス間で同期されるパスキーはここでは使用できません。
login-step-up-passkey = { $app } ではパスキーによるサインインが必要です。
login-email-label = メールアドレス
login-continue = パスキーで続行
login-no-email = パスキーでサインイン（メールアドレスなし）
social-continue = { $provider } で続行
select-title = アカウントの選択
select-continue-as = { $name } として続行
select-another = 別のアカウントを使用
consent-title = アクセスの許可
consent-heading = { $app } を許可しますか？
consent-asks = { $app } は次のことを求めています:
consent-signed-in = { $email } としてサインインしています。この許可はアカウントページで取り消せます。
consent-allow = 許可
consent-deny = 拒否
consent-logo = { $app } のロゴ
scope-openid = サインイン時にあなたが誰かを知る
scope-profile = 名前と写真を見る
scope-email = メールアドレスを見る
scope-offline = ここでサインインしていないときも、取り消すまでアクセスを保つ
scope-credentials = パスキーを表示・管理する
scope-other = あなたの代わりに API を使用する
step-up-title = より強固なサインインが必要です
step-up-bound = { $app } では、デバイスから出ないパスキーまたはセキュリティキーが必要です。あなたのアカウントにはデバイス間で同期されるパスキーしかありません。
step-up-passkey = { $app } ではパスキーによるサインインが必要です。あなたのアカウントにはパスキーがありません。
step-up-add = アカウントページで追加してから、もう一度 { $app } にサインインしてください。
step-up-account-link = アカウントページを開く
step-up-back = { $app } に戻る
invalid-redirect-title = 無効なリダイレクト URI
invalid-redirect-body = アプリケーションが登録していないアドレスでここに送られたため、元のアプリケーションには戻りません。アプリケーションの管理者に連絡してください。
expired-title = サインインの有効期限切れ
expired-heading = このサインインは有効期限が切れています
expired-body = アプリケーションに戻って、もう一度サインインしてください。

## Social links
link-confirm-title = アカウントのリンク
link-confirm-heading = { $provider } アカウントをリンクしますか？
link-confirm-signed-in = { $provider } で { $name } としてサインインしました。
link-confirm-body = リンクすると、この { $provider } アカウントでパスキーなしに { $email } としてここにサインインできます。あなた自身のアカウントである場合にのみリンクしてください。
link-confirm-button = { $provider } アカウントをリンク
cancel = キャンセル

## Sign-out
signout-title = サインアウト
signout-heading = サインアウトしますか？
signout-question = このデバイスで { $tenant } からサインアウトしますか？
signout-button = サインアウト
signed-out-title = サインアウト済み
signed-out-heading = サインアウトしました
close-window = このウィンドウを閉じてかまいません。

## Device authorization
device-title = デバイスでのサインイン
device-enter-code = デバイスに表示されているコードを入力してください。
device-code-label = コード
device-signin-to = 続行するアプリケーション:
device-asks = このアプリケーションは次のユーザーとしてサインインしようとしています:
device-with = 求めている権限:
device-code-check = このコードがデバイスに表示されているものと一致することを確認してください。一致し、かつ自分でこのサインインを始めた場合にのみ承認してください。
device-approve = 承認
device-deny = 拒否

## Errors
error-title = エラー
error-heading = 問題が発生しました

# The one-time offer of a passkey after a social sign-in
offer-passkey-title = パスキーを追加
offer-passkey-heading = 次回はもっと速くサインイン
offer-passkey-body = このアカウントにパスキーを追加すると、次回から指紋、顔認証、または画面ロックでサインインでき、他のアカウントを経由する必要がありません。
offer-passkey-add = パスキーを追加
offer-passkey-skip = 今はしない

## Messages the page script shows
js-server-error = サーバーが要求を完了できませんでした。
js-not-allowed = パスキーの要求がキャンセルされたかタイムアウトしました。または、このページはパスキーに対応するアドレスではありません。もう一度お試しください。
js-invalid-state = この認証器はすでにあなたのアカウントに登録されています。
js-security = このページのアドレスでは、このアカウントのパスキーを使用できません。
js-not-supported = この認証器は必要な種類のパスキーに対応していません。
js-authenticator-not-allowed = 組織が承認したセキュリティキーとデバイスのみ使用できます。この認証器は承認されていません。承認済みのセキュリティキーを使うか、どれが承認されているか管理者に確認してください。
js-abort = パスキーの要求が中断されました。もう一度お試しください。
js-generic = 問題が発生しました。
js-tap-key = セキュリティキーを挿入するか、タッチしてください…
js-follow-device = デバイスの指示に従ってください…
js-passkey-ready = パスキーの準備ができました。サインインしています…
js-choose-passkey = パスキーを選択してください…
js-checking-code = コードを確認しています…
js-approved = 承認しました。デバイスがサインインしています。
js-denied = 拒否しました。デバイスはサインインしません。
js-security-key = セキュリティキー
js-passkey = パスキー
js-added = 追加日
js-rename = 名前を変更
js-remove = 削除
js-only-one = 唯一のパスキーを削除する前に、別のパスキーまたはセキュリティキーを追加してください。
js-removed = 削除しました。
js-new-name = 新しい名前
js-save = 保存
js-renamed = 名前を変更しました。
js-key-added = セキュリティキーを追加しました。
js-passkey-added = パスキーを追加しました。
js-unlink = リンク解除
js-link = リンク
js-link-add-first = 別のサインイン方法をリンクするには、まず上でパスキーを追加してから、もう一度リンクしてください。
js-link-confirm-first = 別のサインイン方法をリンクするには、まずパスキーで本人確認をしてください。
js-unlinked = リンクを解除しました。
js-unsupported-browser = このブラウザーはパスキーに対応していません。最新版の Chrome、Safari、Edge、または Firefox を使用してください。

## E-mails (plain text)
mail-hello = { $name } さん
mail-invite-subject = { $tenant } への招待
mail-invite-lead = このリンクからパスキーを作成すると、パスワードなしでサインインできます。
mail-recover-subject = { $tenant } アカウントの復旧
mail-recover-lead = このリンクからアカウントに新しいパスキーを登録してください。
mail-once = このリンクは 1 回だけ使用できます。心当たりのない場合は、このメッセージを無視してください。
mail-link-subject = { $tenant } アカウントに { $provider } でのサインインが追加されました
mail-link-body = { $tenant } アカウントに { $provider }（{ $account }）でサインインできるようになりました。
mail-link-warning = 心当たりがない場合は、{ $url } でパスキーを使ってサインインし、{ $provider } のリンクを解除してから、管理者に連絡してください。
