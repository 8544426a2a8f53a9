from agentguard.cli.main import main

raise SystemExit(main())
