// Test support lives in e2e/.
