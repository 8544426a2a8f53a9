from agentguard.cli.launch import main

raise SystemExit(main())
